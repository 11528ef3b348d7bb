package io.actionstate.cleanup;

/**
 * An offset of one partition (WIT {@code partition-offset}): the next offset to read in a
 * marker, the first offset to keep in a plan or boundary.
 *
 * @param partition Kafka partition number, 0 ..= 2^31-1
 * @param offset Kafka offset, 0 ..= 2^63-1
 */
public record PartitionOffset(int partition, long offset) {
  public PartitionOffset {
    if (partition < 0) {
      throw new IllegalArgumentException("partition " + partition + " is negative");
    }
    if (offset < 0) {
      throw new IllegalArgumentException(
          "offset " + offset + " of partition " + partition + " is negative");
    }
  }
}

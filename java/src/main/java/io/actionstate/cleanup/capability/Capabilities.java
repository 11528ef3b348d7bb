package io.actionstate.cleanup.capability;

import io.actionstate.cleanup.PartitionOffset;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The Kafka capabilities the cleanup component imports ({@code clock}, {@code kafka-admin},
 * {@code kafka-writer}, {@code kafka-consumer} of the WIT), as the one seam between the
 * component and the outside world. {@code KafkaCapabilities} implements them over kafka-clients;
 * a test or another client is a new implementation or a decorator of these interfaces.
 *
 * <p>Every method is one plain Kafka operation: no retries, waits for propagation or
 * interpretation of errors (the component does all of that). A Kafka failure is a
 * {@link KafkaFailure} carrying the {@code kafka-error} case; any other exception is a broken
 * host invariant and traps the component.
 */
public record Capabilities(Clock clock, Admin admin, Writers writers, Consumers consumers) {
  public Capabilities {
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(admin, "admin");
    Objects.requireNonNull(writers, "writers");
    Objects.requireNonNull(consumers, "consumers");
  }

  /** WIT {@code clock}. */
  public interface Clock {
    /** Milliseconds on a monotonic clock. */
    long nowMs();

    /** Blocks for at least {@code ms} milliseconds. */
    void sleepMs(int ms);

    /** How long one Kafka step may take, retries included; at least 1. */
    int operationTimeoutMs();
  }

  /** One configuration entry; {@code value} is empty when the broker reports none. */
  public record ConfigEntry(String name, Optional<String> value) {}

  /** One partition's readable range: log start offset and last stable offset. */
  public record PartitionRange(int partition, long beginning, long end) {}

  /**
   * WIT {@code topic-metadata}; {@code replicationFactor} is the smallest number of assigned
   * replicas over the partitions (0 without partitions).
   */
  public record TopicMetadata(
      String topic,
      String topicId,
      List<Integer> partitions,
      List<ConfigEntry> configs,
      List<PartitionRange> offsets,
      int replicationFactor) {}

  /**
   * WIT {@code cluster-description}: the broker IDs, ascending, and one entry per requested
   * configuration name as the broker with the lowest ID reports it.
   */
  public record ClusterDescription(List<Integer> brokers, List<ConfigEntry> configs) {}

  /** WIT {@code offset-spec}. */
  public enum OffsetSpec {
    EARLIEST,
    LATEST
  }

  /** WIT {@code kafka-admin}: one request per call, bounded, never retried. */
  public interface Admin extends AutoCloseable {
    /** One element per topic, in order; empty when the topic does not exist. */
    List<Optional<TopicMetadata>> describe(
        List<String> topics, List<String> configNames, boolean withOffsets) throws KafkaFailure;

    /**
     * The brokers (DescribeCluster) and the named configuration entries of the one with the
     * lowest ID (DescribeConfigs on its BROKER resource; skipped without names).
     */
    ClusterDescription describeCluster(List<String> configNames) throws KafkaFailure;

    /** {@code true} when created, {@code false} when it already existed. */
    boolean createTopic(
        String topic, int partitions, short replicationFactor, List<ConfigEntry> configs)
        throws KafkaFailure;

    List<PartitionOffset> listOffsets(String topic, List<Integer> partitions, OffsetSpec spec)
        throws KafkaFailure;

    List<PartitionOffset> deleteRecords(String topic, List<PartitionOffset> before)
        throws KafkaFailure;

    @Override
    void close();
  }

  /** WIT {@code kafka-writer.writer.open}. */
  public interface Writers {
    /** A transactional producer (fenced at creation) or, without an id, an idempotent one. */
    Writer open(Optional<String> transactionalId) throws KafkaFailure;
  }

  /** WIT {@code kafka-writer.writer}: one producer, kept until the component drops it. */
  public interface Writer extends AutoCloseable {
    /** Appends one record and returns its offset once acknowledged (committed, if transactional). */
    long append(String topic, int partition, String key, String value) throws KafkaFailure;

    @Override
    void close();
  }

  /** WIT {@code kafka-consumer.consumer.open}. */
  public interface Consumers {
    /** An assign-only, read_committed consumer of {@code topic}; does not contact the cluster. */
    Consumer open(String topic) throws KafkaFailure;
  }

  /**
   * WIT {@code polled-batch}: column {@code i} of each array describes the poll's record {@code i}.
   * {@code keys}, {@code values} and {@code timestamps} are empty unless data was asked for; the
   * texts are {@code null} where the WIT has {@code none}, a timestamp is milliseconds since the
   * Unix epoch, -1 when the record has none.
   */
  public record PolledBatch(
      int[] partitions,
      long[] offsets,
      byte[] flags,
      List<String> keys,
      List<String> values,
      long[] timestamps) {
    /** Flag bit: the record has a key. */
    public static final int HAS_KEY = 1;
    /** Flag bit: the record has a value (else it is a tombstone). */
    public static final int HAS_VALUE = 2;
    /** Flag bit: every present key and value is valid UTF-8. */
    public static final int UTF8 = 4;

    public int size() {
      return partitions.length;
    }
  }

  /**
   * One record of the latest poll as the client delivered it: whether it has a key and a value
   * (else the value is a tombstone), and their texts when they are present and valid UTF-8 (else
   * {@code null}), so the records a replay hands out are decoded once, when polled.
   */
  public record PolledRecord(
      int partition,
      long offset,
      boolean hasKey,
      boolean hasValue,
      String keyText,
      String valueText) {}

  /** WIT {@code kafka-consumer.consumer}. */
  public interface Consumer extends AutoCloseable {
    void assign(List<PartitionOffset> start) throws KafkaFailure;

    List<PartitionOffset> position() throws KafkaFailure;

    PolledBatch poll(int maxRecords, int timeoutMs, boolean withData) throws KafkaFailure;

    /** Record {@code index} of the latest poll (kept until the next poll or close). */
    PolledRecord polled(int index);

    @Override
    void close();
  }
}

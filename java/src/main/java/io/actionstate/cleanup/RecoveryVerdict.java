package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The verdict for a restore that is allowed (WIT {@code recovery.recovery-verdict}).
 *
 * @param boundary the committed boundary that was enforced; empty in standard mode
 * @param versioned false when every marker was legacy
 */
public record RecoveryVerdict(
    String topic,
    Optional<List<PartitionOffset>> boundary,
    boolean versioned,
    List<PartitionRange> ranges) {

  /** One partition of an allowed restore: where replay starts and the live range. */
  public record PartitionRange(int partition, long requested, long beginning, long end) {}

  static RecoveryVerdict from(Object value) {
    Object[] f = (Object[]) value;
    Case boundary = (Case) f[1];
    List<PartitionRange> ranges = new ArrayList<>();
    for (Object item : (List<?>) f[3]) {
      Object[] r = (Object[]) item;
      ranges.add(
          new PartitionRange(
              Wit.u32AsInt(r[0], "partition"),
              Wit.u64AsLong(r[1], "requested"),
              Wit.u64AsLong(r[2], "beginning"),
              Wit.u64AsLong(r[3], "end")));
    }
    return new RecoveryVerdict(
        (String) f[0],
        boundary.index() == 0
            ? Optional.empty()
            : Optional.of(List.copyOf(Wit.offsets(boundary.payload()))),
        (Boolean) f[2],
        List.copyOf(ranges));
  }
}

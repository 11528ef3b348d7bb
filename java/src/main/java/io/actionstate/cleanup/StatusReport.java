package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The state of a control topic and of the data topic it governs (WIT {@code status-report}). */
public record StatusReport(
    String controlTopic,
    List<ControlRecord> operations,
    List<PartitionOffset> boundary,
    Optional<String> topic,
    Optional<String> topicId,
    Optional<String> liveTopicId,
    List<LivePartition> live,
    Optional<String> brokenHistory) {

  /** Live state of one data-topic partition with its effective boundary. */
  public record LivePartition(int partition, long beginning, long end, long boundary) {}

  static Optional<String> optionalString(Object value) {
    Case c = (Case) value;
    return c.index() == 0 ? Optional.empty() : Optional.of((String) c.payload());
  }

  static StatusReport from(Object value) {
    Object[] f = (Object[]) value;
    List<ControlRecord> operations = new ArrayList<>();
    for (Object item : (List<?>) f[1]) {
      operations.add(Wit.controlRecord(item));
    }
    List<LivePartition> live = new ArrayList<>();
    for (Object item : (List<?>) f[6]) {
      Object[] p = (Object[]) item;
      live.add(
          new LivePartition(
              Wit.u32AsInt(p[0], "partition"),
              Wit.u64AsLong(p[1], "beginning"),
              Wit.u64AsLong(p[2], "end"),
              Wit.u64AsLong(p[3], "boundary")));
    }
    return new StatusReport(
        (String) f[0],
        List.copyOf(operations),
        List.copyOf(Wit.offsets(f[2])),
        optionalString(f[3]),
        optionalString(f[4]),
        optionalString(f[5]),
        List.copyOf(live),
        optionalString(f[7]));
  }
}

package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The state of a control topic and of the data topic it governs (WIT {@code status-report}). */
public record StatusReport(
    String controlTopic,
    List<ControlRecord> operations,
    List<PlanTimes> times,
    List<PartitionOffset> boundary,
    List<BoundaryOrigin> boundaryOrigins,
    Optional<String> topic,
    Optional<String> topicId,
    Optional<String> liveTopicId,
    List<LivePartition> live,
    Optional<String> brokenHistory) {

  /**
   * When a plan became COMMITTED and APPLIED (one per operation, in the same order): the control
   * records' Kafka timestamps in milliseconds since the Unix epoch; empty when the record had
   * none, or compaction kept only the plan's newest record.
   */
  public record PlanTimes(Optional<Long> committedAt, Optional<Long> appliedAt) {}

  /** The plan a partition's effective boundary is the offset of (its source recovery point). */
  public record BoundaryOrigin(int partition, String planId) {}

  /** Live state of one data-topic partition with its effective boundary. */
  public record LivePartition(int partition, long beginning, long end, long boundary) {}

  static Optional<String> optionalString(Object value) {
    Case c = (Case) value;
    return c.index() == 0 ? Optional.empty() : Optional.of((String) c.payload());
  }

  private static Optional<Long> optionalLong(Object value) {
    Case c = (Case) value;
    return c.index() == 0 ? Optional.empty() : Optional.of((Long) c.payload());
  }

  static StatusReport from(Object value) {
    Object[] f = (Object[]) value;
    List<ControlRecord> operations = new ArrayList<>();
    for (Object item : (List<?>) f[1]) {
      operations.add(Wit.controlRecord(item));
    }
    List<PlanTimes> times = new ArrayList<>();
    for (Object item : (List<?>) f[2]) {
      Object[] t = (Object[]) item;
      times.add(new PlanTimes(optionalLong(t[0]), optionalLong(t[1])));
    }
    List<BoundaryOrigin> origins = new ArrayList<>();
    for (Object item : (List<?>) f[4]) {
      Object[] o = (Object[]) item;
      origins.add(new BoundaryOrigin(Wit.u32AsInt(o[0], "partition"), (String) o[1]));
    }
    List<LivePartition> live = new ArrayList<>();
    for (Object item : (List<?>) f[8]) {
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
        List.copyOf(times),
        List.copyOf(Wit.offsets(f[3])),
        List.copyOf(origins),
        optionalString(f[5]),
        optionalString(f[6]),
        optionalString(f[7]),
        List.copyOf(live),
        optionalString(f[9]));
  }
}

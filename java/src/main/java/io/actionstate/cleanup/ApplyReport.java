package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** What one {@link Cleanup#apply} did (WIT {@code coordinator.apply-report}). */
public record ApplyReport(
    String planId,
    Outcome outcome,
    Optional<Status> status,
    List<PartitionPreview> preview,
    List<PartitionOffset> target,
    List<PartitionOffset> beginningsAfter,
    List<String> markedApplied,
    Optional<NewControlTopic> createdControlTopic,
    List<Warning> warnings) {

  /** WIT {@code apply-outcome}, cases in declaration order. */
  public enum Outcome {
    /** Committed, deleted, verified and marked APPLIED in this run. */
    APPLIED,
    /** Was COMMITTED already; this run repeated the deletion and marked it APPLIED. */
    RESUMED,
    /** Was APPLIED already; nothing was done. */
    ALREADY_APPLIED,
    /** Every check passed; nothing durable happened. */
    DRY_RUN,
    /** Every check passed, but the review answered {@code DECLINE}: nothing was committed. */
    DECLINED
  }

  /** One partition as the operator reviews it before the commit. */
  public record PartitionPreview(
      int partition, long beginning, long boundary, long end, long recordsToDelete) {}

  /** A control topic an apply created (in a dry run: would create). */
  public record NewControlTopic(
      String name, int partitions, int replicationFactor, int minInsyncReplicas) {}

  /**
   * A control topic with fewer replicas than its cluster's production default (WIT
   * {@code control-topic-replication}).
   *
   * @param reassignment the document for {@code kafka-reassign-partitions
   *     --reassignment-json-file} that adds the replicas
   */
  public record ControlTopicReplication(
      String controlTopic,
      int replicationFactor,
      int recommendedReplicationFactor,
      int recommendedMinInsyncReplicas,
      long brokerCount,
      int clusterDefaultReplicationFactor,
      String reassignment) {}

  /**
   * Something the apply found that the operator should fix; it went on regardless (WIT
   * {@code apply-warning}).
   *
   * @param kind the WIT case: {@code under-replicated-control-topic} or
   *     {@code replication-unchecked}
   * @param message the one sentence to show, with the commands that fix it
   * @param replication the facts of an under-replicated control topic; empty for other kinds
   */
  public record Warning(
      String kind, String message, Optional<ControlTopicReplication> replication) {}

  static Warning warning(Object value) {
    Case c = (Case) value;
    if (c.index() == 1) {
      return new Warning("replication-unchecked", (String) c.payload(), Optional.empty());
    }
    Object[] f = (Object[]) c.payload();
    return new Warning(
        "under-replicated-control-topic",
        (String) f[7],
        Optional.of(
            new ControlTopicReplication(
                (String) f[0],
                (int) (long) (Long) f[1],
                (int) (long) (Long) f[2],
                (int) (long) (Long) f[3],
                (Long) f[4],
                (int) (long) (Long) f[5],
                (String) f[6])));
  }

  static PartitionPreview preview(Object value) {
    Object[] f = (Object[]) value;
    return new PartitionPreview(
        Wit.u32AsInt(f[0], "partition"),
        Wit.u64AsLong(f[1], "beginning"),
        Wit.u64AsLong(f[2], "boundary"),
        Wit.u64AsLong(f[3], "end"),
        Wit.u64AsLong(f[4], "records to delete"));
  }

  static NewControlTopic newControlTopic(Object value) {
    Object[] f = (Object[]) value;
    return new NewControlTopic(
        (String) f[0],
        Wit.u32AsInt(f[1], "partitions"),
        (int) (long) (Long) f[2],
        (int) (long) (Long) f[3]);
  }

  static Optional<Status> status(Object value) {
    Case c = (Case) value;
    return c.index() == 0 ? Optional.empty() : Optional.of(Status.values()[((Case) c.payload()).index()]);
  }

  static ApplyReport from(Object value) {
    Object[] f = (Object[]) value;
    List<PartitionPreview> preview = new ArrayList<>();
    for (Object item : (List<?>) f[3]) {
      preview.add(preview(item));
    }
    List<String> marked = new ArrayList<>();
    for (Object item : (List<?>) f[6]) {
      marked.add((String) item);
    }
    Case created = (Case) f[7];
    List<Warning> warnings = new ArrayList<>();
    for (Object item : (List<?>) f[8]) {
      warnings.add(warning(item));
    }
    return new ApplyReport(
        (String) f[0],
        Outcome.values()[((Case) f[1]).index()],
        status(f[2]),
        List.copyOf(preview),
        List.copyOf(Wit.offsets(f[4])),
        List.copyOf(Wit.offsets(f[5])),
        List.copyOf(marked),
        created.index() == 0 ? Optional.empty() : Optional.of(newControlTopic(created.payload())),
        List.copyOf(warnings));
  }
}

package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.ApplyOptions;
import io.actionstate.cleanup.ApplyReport;
import io.actionstate.cleanup.Cleanup;
import io.actionstate.cleanup.OperatorEvents;
import io.actionstate.cleanup.PartitionOffset;
import io.actionstate.cleanup.Plan;
import io.actionstate.cleanup.Plans;
import io.actionstate.cleanup.RecoveryPolicy;
import io.actionstate.cleanup.RecoveryRefusalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;

/**
 * One scenario's world: its own action-state topic (two partitions), effects topic, control topic
 * and source gate; starting the job on the class's MiniCluster; releasing actions and waiting for
 * their effects; planning from the job's snapshots with the snapshot reader; applying plans.
 */
final class Harness implements AutoCloseable {
  static final int PARTITIONS = 2;
  static final int PARALLELISM = 2;
  static final Duration WAIT = Duration.ofSeconds(120);

  final FlinkCluster flink;
  final String state;
  final String effects;
  final String control;
  final String gate;
  final Plans plans = Plans.load();
  final Cleanup cleanup = Cleanup.connect(Kafka.clientObjects(), Duration.ofSeconds(30));

  private Harness(FlinkCluster flink, String prefix) {
    this.flink = flink;
    this.state = Kafka.unique(prefix);
    this.effects = state + "-effects";
    this.control = state + "-control";
    this.gate = state;
  }

  static Harness create(FlinkCluster flink, String prefix) throws Exception {
    Harness h = new Harness(flink, prefix);
    Kafka.createActionStateTopic(h.state, PARTITIONS);
    Kafka.createTopic(h.effects, 1);
    GatedActions.named(h.gate);
    return h;
  }

  JobSettings settings() {
    return JobSettings.of(Kafka.client(), state, effects, control);
  }

  /**
   * Submits the job named {@code name} (the Probe's key), restoring {@code restoreFrom} when not
   * null, with the cluster's job configuration plus {@code extra}.
   */
  JobID start(String name, Path restoreFrom, JobSettings settings, Map<String, String> extra)
      throws Exception {
    return start(name, restoreFrom, settings, extra, PARALLELISM);
  }

  /** {@link #start} with the action operator at {@code parallelism}. */
  JobID start(
      String name,
      Path restoreFrom,
      JobSettings settings,
      Map<String, String> extra,
      int parallelism)
      throws Exception {
    Map<String, String> config = new HashMap<>(flink.jobConfig());
    if (restoreFrom != null) {
      config.put("execution.state-recovery.path", restoreFrom.toUri().toString());
    }
    config.putAll(extra);
    return flink.submit(
        name,
        config,
        env -> ActionJob.build(env, GatedActions.named(gate), settings, parallelism));
  }

  /** Lets the actions with ids below {@code n} out of the source. */
  void release(long n) {
    GatedActions.open(gate, n);
  }

  /** Waits until {@code n} distinct actions have a committed effect. */
  void awaitEffects(long n) throws Exception {
    Waits.until(
        n + " actions with an effect in " + effects,
        WAIT,
        () -> Effects.read(effects).actions() >= n);
  }

  /** Waits until every partition's last stable offset is {@code offset}. */
  void awaitStateEnds(long offset) throws Exception {
    Map<Integer, Long> expected = new TreeMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      expected.put(p, offset);
    }
    Waits.until(
        state + " committed up to " + expected,
        WAIT,
        () -> Kafka.committedEnds(state).equals(expected));
  }

  /**
   * Waits until no transaction is open on the action-state topic (every partition's last stable
   * offset is its high watermark) and returns those ends: after a failure, aborted transactions
   * take offsets too, so the ends are no longer twice the actions.
   */
  Map<Integer, Long> awaitSettledEnds() throws Exception {
    AtomicReference<Map<Integer, Long>> ends = new AtomicReference<>();
    Waits.until(
        state + " without open transactions",
        WAIT,
        () -> {
          ends.set(Kafka.committedEnds(state));
          return ends.get().equals(Kafka.highWatermarks(state));
        });
    return ends.get();
  }

  /** Waits until the job's subtasks all report the replay unfinished (1) or finished (0). */
  void awaitReplay(String job, boolean unfinished) throws Exception {
    Waits.until(
        job + (unfinished ? ": every subtask replaying" : ": every subtask done replaying"),
        WAIT,
        () -> {
          long[] live = Probe.live(job, "replayUnfinished");
          return live[1] == PARALLELISM && live[0] == (unfinished ? PARALLELISM : 0);
        });
  }

  /** The plan of a snapshot, read by the component's snapshot reader on the JVM. */
  Plan plan(Path snapshot) throws Exception {
    return plans.fromSnapshot(snapshot, ActionJob.OPERATOR_UID, null);
  }

  static Map<Integer, Long> offsets(Plan plan) {
    Map<Integer, Long> m = new TreeMap<>();
    for (PartitionOffset po : plan.offsets()) {
      m.put(po.partition(), po.offset());
    }
    return m;
  }

  static Map<Integer, Long> each(long offset) {
    Map<Integer, Long> m = new TreeMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      m.put(p, offset);
    }
    return m;
  }

  /** The versioned marker of a plan's offsets: what a restore from its snapshot requests. */
  static String marker(Plan plan) {
    return "{\"schemaVersion\":1,\"topic\":\"" + plan.topic() + "\",\"topicId\":\""
        + plan.topicId() + "\",\"offsets\":{"
        + plan.offsets().stream()
            .map(po -> "\"" + po.partition() + "\":" + po.offset())
            .collect(Collectors.joining(","))
        + "}}";
  }

  ApplyReport apply(Plan plan, OperatorEvents events) throws Exception {
    ApplyReport report = cleanup.apply(plans.render(plan), ApplyOptions.of(control), events);
    assertEquals(ApplyReport.Outcome.APPLIED, report.outcome(), "apply of " + plan.planId());
    return report;
  }

  /** The retained checkpoints of a job, oldest first. */
  List<Path> retainedCheckpoints(JobID job) throws IOException {
    Path dir = flink.dir().resolve("checkpoints").resolve(job.toHexString());
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .sorted((a, b) -> Long.compare(number(a), number(b)))
          .toList();
    }
  }

  /** Waits for a retained checkpoint of the job whose markers are {@code offsets}; its path. */
  Path awaitCheckpointAt(JobID job, Map<Integer, Long> offsets) throws Exception {
    AtomicReference<Path> found = new AtomicReference<>();
    Waits.until(
        "a checkpoint of " + job + " at " + offsets,
        WAIT,
        () -> {
          List<Path> retained = retainedCheckpoints(job);
          if (retained.isEmpty()) {
            return false;
          }
          Path latest = retained.get(retained.size() - 1);
          try {
            if (offsets(plan(latest)).equals(offsets)) {
              found.set(latest);
              return true;
            }
          } catch (IOException subsumed) {
            // Flink deleted it while it was read (a newer one completed): look again.
          }
          return false;
        });
    return found.get();
  }

  /**
   * For every recovery point: a restore that the committed boundary allows must find every record
   * it needs (each partition still begins at or below its marker, read independently with
   * kafka-clients, and the component's check-recovery agrees); one below the boundary must be
   * refused as a boundary violation and for nothing else. Returns {allowed, refused}.
   */
  int[] checkRecoveryPoints(List<Path> points) throws Exception {
    Map<Integer, Long> boundary = Kafka.beginnings(state);
    int allowed = 0;
    int refused = 0;
    RecoveryPolicy policy =
        RecoveryPolicy.enforced(state, control);
    for (Path point : points) {
      Map<Integer, Long> offsets;
      Plan plan;
      try {
        plan = plan(point);
        offsets = offsets(plan);
      } catch (IOException subsumed) {
        continue;
      }
      boolean below =
          offsets.entrySet().stream().anyMatch(e -> e.getValue() < boundary.get(e.getKey()));
      if (below) {
        RecoveryRefusalException refusal =
            assertThrows(
                RecoveryRefusalException.class,
                () -> cleanup.checkRecovery(List.of(marker(plan)), policy),
                point + " at " + offsets + " is below the boundary " + boundary);
        assertEquals("boundary-violation", refusal.kind(), refusal.getMessage());
        refused++;
      } else {
        cleanup.checkRecovery(List.of(marker(plan)), policy);
        Map<Integer, Long> beginnings = Kafka.beginnings(state);
        for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
          assertTrue(
              beginnings.get(e.getKey()) <= e.getValue(),
              point + " needs partition " + e.getKey() + " from " + e.getValue()
                  + " but it begins at " + beginnings.get(e.getKey()));
        }
        allowed++;
      }
    }
    return new int[] {allowed, refused};
  }

  private static long number(Path chk) {
    return Long.parseLong(chk.getFileName().toString().substring("chk-".length()));
  }

  /** One line of counts for the closing note: {@code COUNTS <scenario>: key=value ...}. */
  static void counts(String scenario, Object... keyValues) {
    StringBuilder line = new StringBuilder("COUNTS ").append(scenario).append(':');
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      line.append(' ').append(keyValues[i]).append('=').append(keyValues[i + 1]);
    }
    System.out.println(line);
  }

  @Override
  public void close() {
    cleanup.close();
  }
}

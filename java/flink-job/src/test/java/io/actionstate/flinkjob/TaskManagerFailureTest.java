package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.ApplyReport;
import io.actionstate.cleanup.OperatorEvents;
import io.actionstate.cleanup.Plan;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TaskManager fails on the way (MiniCluster: the TaskManager is terminated and a fresh one
 * started; every task fails and the job restarts from its latest checkpoint): in the middle of an
 * apply that runs beside the job (once right before the apply writes COMMITTED, once right after,
 * before it deletes), and in the middle of a replay (after a checkpoint completed during that
 * replay). Afterwards every action's effect exists exactly once, and every retained recovery
 * point that the committed boundary allows still finds every record it needs.
 */
class TaskManagerFailureTest {
  @TempDir static Path dir;
  static FlinkCluster flink;

  /** Periodic checkpoints: a restart resumes from the latest one. */
  private static final Map<String, String> CHECKPOINT_EVERY_500_MS =
      Map.of("execution.checkpointing.interval", "500ms");

  @BeforeAll
  static void startFlink() throws Exception {
    flink = FlinkCluster.start(dir);
  }

  @AfterAll
  static void stopFlink() throws Exception {
    flink.stop();
  }

  /**
   * From inside an apply callback: releases actions up to {@code release}, waits until the job
   * has performed some of them ({@code busy} actions have an effect), so that the TaskManager is
   * lost while actions run and completions lie beyond the latest checkpoint, then replaces it.
   */
  private static void loseTaskManagerWhileActionsRun(Harness h, long release, long busy) {
    try {
      h.release(release);
      h.awaitEffects(busy);
      flink.replaceTaskManager();
    } catch (Exception e) {
      throw new IllegalStateException("could not replace the TaskManager", e);
    }
  }

  @Test
  @Timeout(600)
  void aTaskManagerLostDuringAnApplyBesideTheJobLeavesEveryEffectOnceAndEveryAllowedPointWhole()
      throws Exception {
    try (Harness h = Harness.create(flink, "failure-apply")) {
      String name = "failure-apply";
      JobID job = h.start(name, null, h.settings(), CHECKPOINT_EVERY_500_MS);
      flink.awaitRunning(job);
      h.release(40);
      h.awaitEffects(40);
      h.awaitStateEnds(40);
      Path p0 = flink.savepoint(job);
      // A first boundary, so that the job's restarts below are checked against one.
      h.apply(h.plan(p0), new OperatorEvents() {});

      h.release(80);
      h.awaitEffects(80);
      h.awaitStateEnds(80);
      Path chkA = h.awaitCheckpointAt(job, Harness.each(80));
      Plan planA = h.plan(chkA);
      List<String> events = new ArrayList<>();
      h.apply(
          planA,
          new OperatorEvents() {
            @Override
            public Review beforeCommit(
                String planId,
                List<ApplyReport.PartitionPreview> preview,
                Optional<ApplyReport.NewControlTopic> created) {
              events.add("TaskManager lost before COMMITTED of " + chkA.getFileName());
              loseTaskManagerWhileActionsRun(h, 120, 90);
              return Review.PROCEED;
            }
          });
      h.awaitEffects(120);
      assertNull(Effects.read(h.effects).exactlyOnceViolation(120), "after the first loss");
      flink.awaitRunning(job);
      Map<Integer, Long> settled = h.awaitSettledEnds();

      Path chkB = h.awaitCheckpointAt(job, settled);
      Plan planB = h.plan(chkB);
      h.apply(
          planB,
          new OperatorEvents() {
            @Override
            public void committed(String planId) {
              events.add("TaskManager lost after COMMITTED of " + chkB.getFileName());
              loseTaskManagerWhileActionsRun(h, 160, 130);
            }
          });
      h.awaitEffects(160);
      flink.awaitRunning(job);
      Effects effects = Effects.read(h.effects);
      long restarts = flink.restarts(job);
      List<Path> points = new ArrayList<>(h.retainedCheckpoints(job));
      points.add(p0);
      int[] verdicts = h.checkRecoveryPoints(points);
      // Metrics of a lost TaskManager stop when its metric group closes, while its tasks may still
      // finish an action: these totals can fall short. The effects reader is the count that
      // decides.
      long replayed = Probe.total(name, "replayedRecords");
      long skipped = Probe.total(name, "actionsSkipped");
      long performed = Probe.total(name, "actionsPerformed");
      flink.cancel(job);

      assertEquals(2, events.size(), "both losses happened inside the applies: " + events);
      assertNull(effects.exactlyOnceViolation(160));
      assertTrue(restarts >= 2, "the job restarted after each loss, restarts: " + restarts);
      assertEquals(settled, Kafka.beginnings(h.state), "boundary of plan B");
      assertTrue(
          verdicts[0] >= 1 && verdicts[1] >= 1,
          "the checkpoints after plan B are allowed, p0 is refused: " + verdicts[0] + " allowed, "
              + verdicts[1] + " refused");
      Harness.counts(
          name, "actions", 160, "effects", effects.records(), "distinctEffects",
          effects.actions(), "restarts", restarts, "planA", Harness.offsets(planA), "planB",
          Harness.offsets(planB), "boundary", Kafka.beginnings(h.state), "replayed", replayed,
          "skippedByMetrics", skipped, "performedByMetrics", performed, "allowedPointsWhole",
          verdicts[0], "refusedPoints", verdicts[1]);
    }
  }

  @Test
  @Timeout(600)
  void aTaskManagerLostDuringAReplayLeavesEveryEffectOnceAndEveryAllowedPointWhole()
      throws Exception {
    try (Harness h = Harness.create(flink, "failure-replay")) {
      JobID first = h.start("failure-replay-first", null, h.settings(), Map.of());
      flink.awaitRunning(first);
      h.release(40);
      h.awaitEffects(40);
      h.awaitStateEnds(40);
      Path s = flink.savepoint(first);
      h.release(100);
      h.awaitEffects(100);
      h.awaitStateEnds(100);
      flink.cancel(first);
      h.apply(h.plan(s), new OperatorEvents() {});

      String name = "failure-replay";
      JobID job =
          h.start(
              name, s, h.settings().withReplayPace(1, Duration.ofMillis(100)),
              CHECKPOINT_EVERY_500_MS);
      flink.awaitRunning(job);
      h.awaitReplay(name, true);
      h.release(120);
      // A checkpoint completes during the replay (its markers: S's offsets, read by the snapshot
      // reader); the restart will resume from it or from a later one taken during the replay.
      Path during = h.awaitCheckpointAt(job, Harness.each(40));
      long[] replaying = Probe.live(name, "replayUnfinished");
      long replayedBeforeLoss = Probe.total(name, "replayedRecords");
      flink.replaceTaskManager();
      assertEquals(
          Harness.PARALLELISM, replaying[0], "both subtasks were replaying when it was lost");

      h.awaitEffects(120);
      flink.awaitRunning(job);
      h.awaitReplay(name, false);
      Effects effects = Effects.read(h.effects);
      long restarts = flink.restarts(job);
      List<Path> points = new ArrayList<>(h.retainedCheckpoints(job));
      points.add(s);
      int[] verdicts = h.checkRecoveryPoints(points);
      long replayed = Probe.total(name, "replayedRecords");
      long skipped = Probe.total(name, "actionsSkipped");
      long performed = Probe.total(name, "actionsPerformed");
      flink.cancel(job);

      assertNull(effects.exactlyOnceViolation(120));
      assertTrue(restarts >= 1, "the job restarted after the loss, restarts: " + restarts);
      assertEquals(20, performed, "actions 100..119, once over both attempts");
      // The restart replays [40, 100) of both partitions in each subtask (120 records) from the
      // checkpoint taken during the first replay; the lost attempt had replayed fewer.
      assertTrue(
          replayed >= 120 && replayed < 240,
          "the first attempt was lost before its replay ended: " + replayed + " replayed in all");
      assertTrue(
          verdicts[0] >= 2,
          "S and the checkpoints since are allowed: " + verdicts[0] + " allowed, " + verdicts[1]
              + " refused");
      Harness.counts(
          name, "actions", 120, "effects", effects.records(), "distinctEffects",
          effects.actions(), "restarts", restarts, "S", Harness.offsets(h.plan(s)),
          "checkpointDuringReplay", during.getFileName() + "=" + Harness.each(40),
          "replayedBeforeLoss", replayedBeforeLoss, "replayedTotal", replayed, "skipped", skipped,
          "performed", performed, "allowedPointsWhole", verdicts[0], "refusedPoints", verdicts[1]);
    }
  }
}

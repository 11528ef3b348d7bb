package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.actionstate.cleanup.CleanupError;
import io.actionstate.cleanup.OperatorEvents;
import io.actionstate.cleanup.Plan;
import io.actionstate.cleanup.RecoveryPolicy;
import io.actionstate.cleanup.RecoveryRefusalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * FLIP-547 on Flink 2.3 (issue 36): a checkpoint D completes while a job restored from an
 * unaligned checkpoint S still consumes S's in-flight data and the action operator still replays
 * the action state.
 *
 * <p>The operator spends 20 ms on each arriving action (per-action work; 40 ms after the restore), so 600 actions released
 * at once wait in the network in front of it; S, unaligned, holds them as input-channel state.
 * The restore from S runs with {@code execution.checkpointing.during-recovery.enabled} (and the
 * {@code unaligned.recover-output-on-downstream.enabled} it requires), the replay slowed down;
 * D is triggered as soon as Flink accepts it. The source releases nothing new after the restore,
 * so every action that arrives is one S held in flight. Evidence that D fell during both
 * recoveries, asserted below: at D's {@code snapshotState} fewer actions had arrived than S held
 * in flight and every subtask still replayed (the operator's own gauges); D holds input-channel
 * state for the action operator (the recovered actions not yet consumed, re-persisted), read
 * from its {@code _metadata} by the CLI's snapshot reader.
 *
 * <p>What must hold: D's markers are S's restored offsets, never past them; no action arriving
 * during the replay is performed before the replay finished (the operator buffers it — in its
 * state at D — and performs it after {@code endReplay}); a job lost right after D and restored
 * from D performs every action's effect exactly once (counted by the read_committed effects
 * reader; the TaskManager is replaced, the job restarts from D), as does one lost during the
 * recovery before D (it restarts from S); a checkpoint Flink declines during the recovery (subtask
 * 0 fails to write its state, {@link JobSettings#declinedSnapshots}) leaves no recovery point and
 * restarts nothing, so D is the recovering job's only point; the CLI and the JVM plan D to the
 * same bytes; a restore from D is allowed under S's boundary, and after a later point's plan is
 * applied a restore from S or D is refused with the component's sentence.
 */
class ChannelStateRecoveryTest {
  @TempDir static Path dir;
  static FlinkCluster flink;
  static final ObjectMapper JSON = new ObjectMapper();
  static final int RELEASED = 640;
  /** One action-state record per second: the replay of what completed after S takes seconds. */
  static final Duration REPLAY_STEP = Duration.ofSeconds(1);

  /** Small network buffers: a few hundred longs fill the network in front of the operator. */
  @BeforeAll
  static void startFlink() throws Exception {
    flink =
        FlinkCluster.start(
            dir,
            Map.of(
                "taskmanager.memory.segment-size", "4kb",
                "taskmanager.network.memory.buffers-per-channel", "2",
                "taskmanager.network.memory.floating-buffers-per-gate", "2"));
  }

  @AfterAll
  static void stopFlink() throws Exception {
    flink.stop();
  }

  static final Map<String, String> UNALIGNED =
      Map.of(
          "execution.checkpointing.unaligned.enabled", "true",
          "execution.checkpointing.aligned-checkpoint-timeout", "0s");

  /** Unaligned checkpoints that may be taken during recovery (FLIP-547). */
  static Map<String, String> duringRecovery() {
    Map<String, String> config = new HashMap<>(UNALIGNED);
    config.put("execution.checkpointing.during-recovery.enabled", "true");
    config.put("execution.checkpointing.unaligned.recover-output-on-downstream.enabled", "true");
    // A checkpoint declined during recovery must not fail the job: the test declines one.
    config.put("execution.checkpointing.tolerable-failed-checkpoints", "5");
    return config;
  }

  /** Whether the snapshot holds in-flight data of the action operator (CLI `snapshot --json`). */
  static boolean actionOperatorChannelState(Path snapshot) throws Exception {
    Cli.Result result = Cli.run("snapshot", snapshot.toString(), "--json");
    assertEquals(0, result.exit(), result.stderr());
    for (JsonNode op : JSON.readTree(result.stdout()).get("operators")) {
      if (ActionJob.OPERATOR_UID.equals(op.path("uid").asText())) {
        return op.path("channelState").asBoolean();
      }
    }
    throw new AssertionError(ActionJob.OPERATOR_UID + " is not in " + snapshot);
  }

  /** Triggers Flink refused while the job recovered because a task was not running yet. */
  static int refusedTriggers;

  /** What a checkpoint trigger came to: the completed checkpoint or why it failed. */
  record Trigger(Path completed, Throwable failure) {}

  /**
   * Triggers a checkpoint of {@code job} as soon as Flink accepts one: again while it refuses the
   * trigger because a task is not running yet ("not being executed at the moment", counted in
   * {@link #refusedTriggers}).
   */
  static Trigger triggerWhenRunning(JobID job) throws Exception {
    long deadline = System.nanoTime() + Harness.WAIT.toNanos();
    while (true) {
      try {
        return new Trigger(flink.checkpoint(job), null);
      } catch (Exception failed) {
        boolean refused = false;
        for (Throwable t = failed; t != null; t = t.getCause()) {
          String message = String.valueOf(t.getMessage());
          refused |= message.contains("is not being executed at the moment");
        }
        if (!refused || System.nanoTime() > deadline) {
          return new Trigger(null, failed);
        }
        refusedTriggers++;
        Thread.sleep(50);
      }
    }
  }

  /** The job's checkpoint folders ({@code chk-N}), with or without {@code _metadata}. */
  static List<Path> chkFolders(Path jobDir) throws IOException {
    if (!Files.isDirectory(jobDir)) {
      return List.of();
    }
    try (Stream<Path> entries = Files.list(jobDir)) {
      return entries.filter(p -> p.getFileName().toString().startsWith("chk-")).toList();
    }
  }

  @Test
  @Timeout(600)
  void aCheckpointTakenWhileInFlightActionsAreRecoveredKeepsTheRestoredOffsetsAndARestoreFromItIsExactlyOnce()
      throws Exception {
    try (Harness h = Harness.create(flink, "flip547")) {
      JobSettings slow = h.settings().withElementPause(Duration.ofMillis(20));
      String first = "flip547-first";
      JobID job = h.start(first, null, slow, UNALIGNED);
      flink.awaitRunning(job);
      h.release(40);
      h.awaitEffects(40);
      h.awaitStateEnds(40);
      h.release(RELEASED);
      Waits.until(
          "the operator working through the released actions",
          Harness.WAIT,
          () -> Probe.total(first, "actionsArrived") > 60);
      Path s = flink.checkpoint(job);
      assertTrue(flink.unalignedCheckpointsEnabled(job), "S is taken with unaligned checkpoints");
      long arrivedAtS = Probe.live(first, "actionsArrivedAtSnapshot")[0];
      // A few actions more complete after S: the restore from S has them to replay.
      Waits.until(
          "actions completed after S",
          Harness.WAIT,
          () -> Probe.total(first, "actionsPerformed") > arrivedAtS + 6);
      flink.cancel(job);
      long inFlightAtS = RELEASED - arrivedAtS;
      assertTrue(inFlightAtS > 100, "S holds " + inFlightAtS + " actions in flight");
      assertTrue(actionOperatorChannelState(s), "S holds in-flight data of the action operator");
      Plan planS = h.plan(s);
      h.apply(planS, new OperatorEvents() {});

      // The restore from S, with checkpoints during recovery. Its TaskManager is lost while it
      // recovers, before any checkpoint of it completed: the job restarts from S again.
      String recovery = "flip547-recovery";
      JobID restored =
          h.start(
              recovery,
              s,
              // 40 ms per recovered action: the in-flight data drains over about 12 s, well
              // after D, on a loaded machine too.
              slow.withElementPause(Duration.ofMillis(40))
                  .withReplayPace(1, REPLAY_STEP)
                  .withDeclinedSnapshots(1),
              duringRecovery());
      // Both subtasks running (each reports its gauges from open()) and recovered actions arriving:
      // one subtask can take its first action before the other has opened.
      Waits.until(
          "recovered actions arriving at both running subtasks",
          Harness.WAIT,
          () -> Probe.total(recovery, "actionsArrived") > 0
              && Probe.live(recovery, "replayUnfinished")[1] == Harness.PARALLELISM);
      long replayingWhenLost = Probe.live(recovery, "replayUnfinished")[0];
      long performedWhenLost = Probe.total(recovery, "actionsPerformed");
      flink.replaceTaskManager();
      assertEquals(Harness.PARALLELISM, replayingWhenLost, "lost while the replay ran");
      assertEquals(0, performedWhenLost, "nothing performed while the replay ran");

      // A checkpoint Flink declines during the recovery: subtask 0 fails to write its state
      // (the asynchronous part), Flink declines the checkpoint and the tasks keep running.
      Trigger declined = triggerWhenRunning(restored);
      assertNull(
          declined.completed(), "the first checkpoint of the restarted attempt is declined");
      Failures.find(declined.failure(), FailingWriteSerializer.SENTENCE);
      Failures.find(declined.failure(), "Asynchronous task checkpoint failed");
      long attemptAtDecline = flink.restarts(restored);
      long replayingAtDecline = Probe.live(recovery, "replayUnfinished")[0];
      long performedAtDecline = Probe.total(recovery, "actionsPerformed");
      Path recoveringJobDir = dir.resolve("checkpoints").resolve(restored.toHexString());
      Waits.until(
          "Flink discarding the declined checkpoint's folder",
          Harness.WAIT,
          () -> chkFolders(recoveringJobDir).isEmpty());
      assertEquals(Harness.PARALLELISM, replayingAtDecline, "declined while the replay ran");
      assertEquals(0, performedAtDecline, "nothing performed before the decline");

      // D, as soon as the restarted attempt takes one.
      Trigger next = triggerWhenRunning(restored);
      if (next.failure() != null) {
        throw new AssertionError("D was not taken", next.failure());
      }
      Path d = next.completed();
      long arrivedAtD = Probe.live(recovery, "actionsArrivedAtSnapshot")[0];
      long replayingAtD = Probe.live(recovery, "replayUnfinishedAtSnapshot")[0];
      long performedBeforeLoss = Probe.total(recovery, "actionsPerformed");
      long stillReplaying = Probe.live(recovery, "replayUnfinished")[0];
      List<Path> retained = h.retainedCheckpoints(restored);
      long attemptAtD = flink.restarts(restored);
      long replayedBeforeLoss = Probe.total(recovery, "replayedRecords");
      long skippedBeforeLoss = Probe.total(recovery, "actionsSkipped");
      // The TaskManager is lost right after D, before either recovery finished: the job
      // restarts from D, its newest completed checkpoint.
      flink.replaceTaskManager();
      assertEquals(List.of(d), retained, "D is the recovering job's only checkpoint");
      assertEquals(attemptAtDecline, attemptAtD, "the declined checkpoint restarted nothing");
      assertEquals(Harness.PARALLELISM, replayingAtD, "every subtask replayed at D");
      assertTrue(
          arrivedAtD < inFlightAtS,
          "at D " + arrivedAtD + " of the " + inFlightAtS + " actions S held in flight had arrived");
      assertTrue(actionOperatorChannelState(d), "D re-persists the recovered actions not consumed");
      assertEquals(Harness.PARALLELISM, stillReplaying, "the replay still ran after D");
      assertEquals(0, performedBeforeLoss, "no action performed while the replay ran");

      Plan planD = h.plan(d);
      assertEquals(Harness.offsets(planS), Harness.offsets(planD), "D keeps S's restored offsets");
      Path planFile = dir.resolve("flip547-d.json");
      Cli.Result cli =
          Cli.run(
              "plan", "--checkpoint", d.toString(), "--operator-uid", ActionJob.OPERATOR_UID,
              "--output", planFile.toString());
      assertEquals(0, cli.exit(), cli.stderr());
      assertEquals(h.plans.render(planD), Files.readString(planFile), "CLI and JVM plans of D");
      // The recovery points the recovering job left: D alone (the checkpoint Flink declined and
      // the triggers refused while tasks deployed left none), at S's offsets, never more.
      Cli.Result retainedD =
          Cli.run(
              "plan", "--retained", recoveringJobDir.toString(), "--operator-uid",
              ActionJob.OPERATOR_UID, "--json");
      assertEquals(0, retainedD.exit(), retainedD.stderr());
      JsonNode points = JSON.readTree(retainedD.stdout()).get("retained").get("points");
      assertEquals(1, points.size(), points.toString());
      assertTrue(
          points.get(0).get("location").asText().endsWith(d.getFileName().toString()),
          points.toString());
      for (JsonNode point : points) {
        for (Map.Entry<Integer, Long> e : Harness.offsets(planS).entrySet()) {
          assertEquals(
              e.getValue().longValue(),
              point.get("offsets").get(String.valueOf(e.getKey())).asLong(),
              "point " + point.get("location") + " of the recovering job");
        }
      }

      // The restart from D: every action once.
      h.awaitEffects(RELEASED);
      h.awaitStateEnds(RELEASED);
      Effects effects = Effects.read(h.effects);
      assertNull(effects.exactlyOnceViolation(RELEASED));
      Path e = flink.checkpoint(restored);
      flink.cancel(restored);
      // Restores from S and D stay allowed while the boundary is S's (the plan applied above).
      RecoveryPolicy policy = RecoveryPolicy.enforced(h.state, h.control);
      h.cleanup.checkRecovery(List.of(Harness.marker(planD)), policy);

      // A later point's plan: S and D now lie below the boundary and are refused.
      Plan planE = h.plan(e);
      assertEquals(Harness.each(RELEASED), Harness.offsets(planE), "E's markers");
      h.apply(planE, new OperatorEvents() {});
      long sOffset = Harness.offsets(planS).get(0);
      for (Plan below : List.of(planS, planD)) {
        RecoveryRefusalException refused =
            assertThrows(
                RecoveryRefusalException.class,
                () -> h.cleanup.checkRecovery(List.of(Harness.marker(below)), policy));
        assertEquals(
            new CleanupError.BoundaryViolation(h.state, 0, sOffset, RELEASED), refused.error());
      }
      Harness.counts(
          "flip547", "actions", RELEASED, "effects", effects.records(), "distinctEffects",
          effects.actions(), "inFlightAtS", inFlightAtS, "arrivedAtD", arrivedAtD,
          "refusedTriggersBeforeD", refusedTriggers, "forcedDeclines", 1,
          "pointsOfRecoveringJob", points.size(),
          "replayingAtD", replayingAtD, "S", Harness.offsets(planS), "D", Harness.offsets(planD),
          "replayedBeforeD", replayedBeforeLoss, "replayedFromD",
          Probe.total(recovery, "replayedRecords") - replayedBeforeLoss, "performedFromD",
          Probe.total(recovery, "actionsPerformed") - performedBeforeLoss, "skippedFromD",
          Probe.total(recovery, "actionsSkipped") - skippedBeforeLoss);
    }
  }
}

package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.OperatorEvents;
import io.actionstate.cleanup.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints taken while the replay is unfinished (SPEC §6, "Checkpoint during recovery"): the
 * job is restored from savepoint S (partitions at 60) with records up to 100 behind it and the
 * replay slowed down (one record per step, 200 ms apart); actions arrive and wait; a checkpoint,
 * aligned in one test and unaligned in the other, completes while every subtask is still
 * replaying. Its markers, read by the snapshot reader, are S's offsets, never past them (the
 * end of the topic is 100 by then); after applying a plan from it, a restore from it is allowed,
 * finds the waiting actions in its state, and repeats no effect.
 */
class CheckpointDuringRecoveryTest {
  @TempDir static Path dir;
  static FlinkCluster flink;

  @BeforeAll
  static void startFlink() throws Exception {
    flink = FlinkCluster.start(dir);
  }

  @AfterAll
  static void stopFlink() throws Exception {
    flink.stop();
  }

  @Test
  @Timeout(600)
  void anAlignedCheckpointDuringReplayKeepsTheRestoredOffsetsAndARestoreFromItRepeatsNoEffect()
      throws Exception {
    checkpointDuringReplay(false);
  }

  @Test
  @Timeout(600)
  void anUnalignedCheckpointDuringReplayKeepsTheRestoredOffsetsAndARestoreFromItRepeatsNoEffect()
      throws Exception {
    checkpointDuringReplay(true);
  }

  private void checkpointDuringReplay(boolean unaligned) throws Exception {
    String tag = "during-" + (unaligned ? "unaligned" : "aligned");
    try (Harness h = Harness.create(flink, tag)) {
      JobID first = h.start(tag + "-first", null, h.settings(), Map.of());
      flink.awaitRunning(first);
      h.release(60);
      h.awaitEffects(60);
      h.awaitStateEnds(60);
      Path s = flink.savepoint(first);
      h.release(100);
      h.awaitEffects(100);
      h.awaitStateEnds(100);
      flink.cancel(first);
      Plan planS = h.plan(s);
      assertEquals(Harness.each(60), Harness.offsets(planS));
      h.apply(planS, new OperatorEvents() {});

      String replay = tag + "-replay";
      Map<String, String> checkpointing =
          unaligned
              ? Map.of(
                  "execution.checkpointing.unaligned.enabled", "true",
                  "execution.checkpointing.aligned-checkpoint-timeout", "0s")
              : Map.of();
      JobID slow =
          h.start(replay, s, h.settings().withReplayPace(1, Duration.ofMillis(200)), checkpointing);
      flink.awaitRunning(slow);
      h.awaitReplay(replay, true);
      // 60..99 come again from the source (S's position) and 100..109 are new: all wait.
      h.release(110);
      Waits.until(
          "50 actions waiting for the replay",
          Harness.WAIT,
          () -> Probe.live(replay, "bufferedActions")[0] == 50);
      Path mid = flink.checkpoint(slow);
      long[] stillReplaying = Probe.live(replay, "replayUnfinished");
      assertEquals(
          Harness.PARALLELISM, stillReplaying[0], "every subtask still replays after " + mid);
      // The job's checkpointing mode: with nothing in flight, Flink 2.3's statistics call an
      // unaligned checkpoint aligned in some runs (seen once in three), so they are not asked.
      assertEquals(
          unaligned, flink.unalignedCheckpointsEnabled(slow), "checkpointing mode for " + mid);
      Map<Integer, Long> endsAtMid = Kafka.committedEnds(h.state);

      Plan planMid = h.plan(mid);
      Map<Integer, Long> midOffsets = Harness.offsets(planMid);
      for (Map.Entry<Integer, Long> e : midOffsets.entrySet()) {
        assertTrue(
            e.getValue() <= Harness.offsets(planS).get(e.getKey()),
            "the plan from " + mid + " passes S's offsets: " + midOffsets);
      }
      assertEquals(Harness.each(60), midOffsets, "the restored offsets, not the end " + endsAtMid);
      Path planFile = dir.resolve(tag + "-plan.json");
      Cli.Result cli =
          Cli.run(
              "plan", "--checkpoint", mid.toString(), "--operator-uid", ActionJob.OPERATOR_UID,
              "--output", planFile.toString());
      assertEquals(0, cli.exit(), cli.stderr());
      assertEquals(h.plans.render(planMid), Files.readString(planFile), "CLI and JVM plans");

      h.awaitReplay(replay, false);
      h.awaitEffects(110);
      flink.cancel(slow);
      long replayedSlow = Probe.total(replay, "replayedRecords");
      assertEquals(2 * 40, replayedSlow, "each subtask replayed [60, 100) of both partitions");

      h.apply(planMid, new OperatorEvents() {});
      String fromMid = tag + "-from-checkpoint";
      JobID again = h.start(fromMid, mid, h.settings(), Map.of());
      flink.awaitRunning(again);
      h.awaitReplay(fromMid, false);
      h.release(130);
      h.awaitEffects(130);
      Effects effects = Effects.read(h.effects);
      flink.cancel(again);

      assertNull(effects.exactlyOnceViolation(130));
      long replayed = Probe.total(fromMid, "replayedRecords");
      long skipped = Probe.total(fromMid, "actionsSkipped");
      long performed = Probe.total(fromMid, "actionsPerformed");
      assertEquals(2 * 50, replayed, "each subtask replayed [60, 110) of both partitions");
      assertEquals(50, skipped, "actions 60..109 waited in the checkpoint and had completed");
      assertEquals(20, performed, "actions 110..129");
      Harness.counts(
          tag, "actions", 130, "effects", effects.records(), "distinctEffects", effects.actions(),
          "S", Harness.offsets(planS), "checkpointDuringReplay", midOffsets, "endAtCheckpoint",
          endsAtMid, "unaligned", unaligned, "replayedWhileCheckpointing", replayedSlow,
          "replayedFromCheckpoint", replayed, "skippedFromCheckpoint", skipped,
          "performedFromCheckpoint", performed);
    }
  }
}

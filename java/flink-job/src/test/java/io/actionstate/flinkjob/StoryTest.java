package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.CleanupError;
import io.actionstate.cleanup.Plan;
import io.actionstate.cleanup.RecoveryPolicy;
import io.actionstate.cleanup.RecoveryRefusalException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * The seed story (SPEC §1) on the real Flink job: 100 actions, savepoint C0 (the action-state
 * topic's partitions end at 100); 150 actions, savepoint C1 (150); 50 more actions and a crash;
 * plan from C1 with the snapshot reader (the JVM's and the CLI's: the same plan, byte for byte),
 * apply with the CLI; a restore from C0 fails at start with the component's sentence naming
 * partition 0, 100 and 150 and produces no effect; a restore from C1 replays [150, end) and no
 * action runs twice. Each action occupies two offsets of its partition (its record and its
 * transaction's commit marker) and actions alternate between the two partitions, so n actions end
 * every partition at offset n.
 */
class StoryTest {
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
  void aRestoreFromC1AfterTheCleanupRepeatsNoEffectAndARestoreFromC0FailsAtStartNamingPartition0And100And150()
      throws Exception {
    try (Harness h = Harness.create(flink, "story")) {
      JobID first = h.start("story-first-run", null, h.settings(), Map.of());
      flink.awaitRunning(first);
      h.release(100);
      h.awaitEffects(100);
      h.awaitStateEnds(100);
      Path c0 = flink.savepoint(first);
      h.release(150);
      h.awaitEffects(150);
      h.awaitStateEnds(150);
      Path c1 = flink.savepoint(first);
      // Completed after C1, then the job is lost: a restore from C1 must find these 50.
      h.release(200);
      h.awaitEffects(200);
      h.awaitStateEnds(200);
      flink.cancel(first);
      assertNull(Effects.read(h.effects).exactlyOnceViolation(200));

      Plan planC0 = h.plan(c0);
      Plan planC1 = h.plan(c1);
      assertEquals(Harness.each(100), Harness.offsets(planC0), "C0's markers");
      assertEquals(Harness.each(150), Harness.offsets(planC1), "C1's markers");
      assertEquals(Kafka.topicId(h.state), planC1.topicId());
      // Through Flink's own FileSystem, by the URI Flink reports: the same plan, recorded under it.
      String reported = "file:" + c1.toAbsolutePath();
      h.cleanup.setSnapshotStore(new FlinkSnapshotStore());
      Plan viaFlink =
          h.cleanup.planFromSnapshot(reported, ActionJob.OPERATOR_UID, null, null).plan();
      assertEquals(reported, viaFlink.sourceRecoveryPoint());
      assertEquals(planC1.offsets(), viaFlink.offsets());
      assertEquals(planC1.topicId(), viaFlink.topicId());

      // The CLI reads the same savepoint to the same plan, then applies it.
      Path planFile = dir.resolve("story-plan.json");
      Cli.Result plan =
          Cli.run(
              "plan", "--checkpoint", c1.toString(), "--operator-uid", ActionJob.OPERATOR_UID,
              "--output", planFile.toString());
      assertEquals(0, plan.exit(), plan.stderr());
      assertEquals(h.plans.render(planC1), Files.readString(planFile), "CLI and JVM plans");
      Cli.Result apply =
          Cli.run(
              "apply", "--plan", planFile.toString(), "--control-topic", h.control,
              "--bootstrap-servers", Kafka.bootstrap(), "--yes");
      assertEquals(0, apply.exit(), apply.stdout() + apply.stderr());
      assertEquals(Harness.each(150), Kafka.beginnings(h.state), "records below 150 are gone");

      // C0 is below the committed boundary: the component's refusal, word for word.
      RecoveryPolicy policy = RecoveryPolicy.enforced(h.state, h.control);
      RecoveryRefusalException expected =
          assertThrows(
              RecoveryRefusalException.class,
              () -> h.cleanup.checkRecovery(List.of(Harness.marker(planC0)), policy));
      assertEquals(new CleanupError.BoundaryViolation(h.state, 0, 100, 150), expected.error());
      JobID fromC0 =
          h.start("story-restore-c0", c0, h.settings(), Map.of("restart-strategy.type", "none"));
      Optional<Throwable> failure = flink.failure(fromC0);
      assertTrue(failure.isPresent(), "the restore from C0 must fail");
      String why = Failures.find(failure.get(), expected.getMessage());
      // Partition 0 as Kafka names a topic-partition: <topic>-0.
      assertTrue(
          why.contains(h.state + "-0 ") && why.contains(" 100 ") && why.contains(" 150"), why);
      assertEquals(0, Probe.total("story-restore-c0", "actionsPerformed"));
      assertNull(Effects.read(h.effects).exactlyOnceViolation(200), "no effect from C0's run");

      // C1 at another parallelism: refused at start, before anything runs (README, rule 1).
      JobID rescaled =
          h.start(
              "story-restore-c1-rescaled", c1, h.settings(), Map.of("restart-strategy.type", "none"),
              1);
      Optional<Throwable> rescaleFailure = flink.failure(rescaled);
      assertTrue(rescaleFailure.isPresent(), "a restore of C1 at parallelism 1 must fail");
      Failures.find(
          rescaleFailure.get(),
          "Restored 2 recovery markers (one per subtask of the snapshot), but the action operator"
              + " now runs with parallelism 1: restore with parallelism 2");
      assertEquals(0, Probe.total("story-restore-c1-rescaled", "actionsPerformed"));

      JobID fromC1 = h.start("story-restore-c1", c1, h.settings(), Map.of());
      flink.awaitRunning(fromC1);
      h.awaitReplay("story-restore-c1", false);
      h.release(250);
      h.awaitEffects(250);
      Effects effects = Effects.read(h.effects);
      flink.cancel(fromC1);

      assertNull(effects.exactlyOnceViolation(250), "no effect from the rescaled restore either");
      long replayed = Probe.total("story-restore-c1", "replayedRecords");
      long skipped = Probe.total("story-restore-c1", "actionsSkipped");
      long performed = Probe.total("story-restore-c1", "actionsPerformed");
      // Each of the two subtasks replays both partitions' [150, 200): 25 records each.
      assertEquals(2 * 50, replayed, "records replayed by the two subtasks");
      assertEquals(50, skipped, "actions 150..199 completed after C1 and were skipped");
      assertEquals(50, performed, "actions 200..249");
      Harness.counts(
          "story", "actions", 250, "effects", effects.records(), "distinctEffects",
          effects.actions(), "C0", Harness.offsets(planC0), "C1", Harness.offsets(planC1),
          "boundary", Kafka.beginnings(h.state), "replayedFromC1", replayed, "skippedAfterC1",
          skipped, "performedAfterC1", performed, "effectsOfC0Restore",
          Probe.total("story-restore-c0", "actionsPerformed"));
    }
  }
}

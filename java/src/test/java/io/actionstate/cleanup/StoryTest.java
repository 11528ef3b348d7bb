package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo story of the Rust CLI ({@code action-state-cleanup demo}) through the Java API on a
 * real broker: checkpoints C0 and C1, a plan from C1, apply, restore allowed from C1 and refused
 * from C0 naming 100 and 150, and a replay of exactly [150, end).
 */
class StoryTest {
  @Test
  void planApplyThenRestoreFromC1IsAllowedAndReplaysExactlyFrom150WhileC0IsRefused()
      throws Exception {
    String topic = Broker.unique("java-story");
    String control = topic + "-cleanup-control";
    Broker.createTopic(topic, 2);
    Plans plans = Components.plans();
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      Broker.writeActions(topic, 0, 0, 100);
      Broker.writeActions(topic, 1, 0, 40);
      String c0 = cleanup.snapshotMarker(topic);
      Broker.writeActions(topic, 0, 100, 150);
      Broker.writeActions(topic, 1, 40, 60);
      String c1 = cleanup.snapshotMarker(topic);
      Broker.writeActions(topic, 0, 150, 180);

      Plan plan = plans.fromMarkers("C1", List.of(c1));
      try (MarkerFilesPlanner planner = cleanup.planMarkerFiles("C1")) {
        planner.addFile("c1-subtask-0.json", c1);
        MarkerFilesPlanner.Result fromFiles = planner.finish();
        assertEquals(plan, fromFiles.plan(), "the planner answers what plan-from-markers does");
        assertEquals(1, fromFiles.markers());
      }
      assertEquals(List.of(new PartitionOffset(0, 150), new PartitionOffset(1, 60)), plan.offsets());
      List<java.util.Optional<ApplyReport.NewControlTopic>> announced = new ArrayList<>();
      ApplyReport declined =
          cleanup.apply(
              plans.render(plan),
              ApplyOptions.of(control),
              new OperatorEvents() {
                @Override
                public Review beforeCommit(
                    String planId,
                    List<ApplyReport.PartitionPreview> preview,
                    java.util.Optional<ApplyReport.NewControlTopic> created) {
                  announced.add(created);
                  return Review.DECLINE;
                }
              });
      assertEquals(ApplyReport.Outcome.DECLINED, declined.outcome());
      assertEquals(
          List.of(150L, 60L),
          cleanup.previewPlan(plans.render(plan)).stream()
              .map(ApplyReport.PartitionPreview::boundary)
              .toList(),
          "declined: nothing deleted, the preview still shows what the plan would delete");
      List<String> verified = new ArrayList<>();
      List<String> reviewed = new ArrayList<>();
      List<String> committed = new ArrayList<>();
      ApplyReport report =
          cleanup.apply(
              plans.render(plan),
              ApplyOptions.of(control),
              new OperatorEvents() {
                @Override
                public void verified(Plan verifiedPlan) {
                  verified.add(verifiedPlan.planId() + " " + verifiedPlan.topic());
                }

                @Override
                public Review beforeCommit(
                    String planId,
                    List<ApplyReport.PartitionPreview> preview,
                    java.util.Optional<ApplyReport.NewControlTopic> created) {
                  reviewed.add(planId + " " + preview.size());
                  return Review.PROCEED;
                }

                @Override
                public void committed(String planId) {
                  committed.add(planId);
                }
              });
      assertEquals(ApplyReport.Outcome.APPLIED, report.outcome());
      assertEquals(plan.planId(), report.planId());
      assertEquals(
          List.of(plan.planId() + " " + plan.topic()), verified, "the plan is named once, first");
      assertEquals(List.of(plan.planId() + " 2"), reviewed, "the review runs once, before COMMITTED");
      assertEquals(List.of(plan.planId()), committed);
      assertEquals(
          List.of(new PartitionOffset(0, 150), new PartitionOffset(1, 60)),
          report.beginningsAfter());
      assertTrue(
          declined.createdControlTopic().isEmpty(),
          "the declined apply created nothing, not even the control topic");
      assertEquals(1, announced.size());
      assertTrue(
          announced.get(0).isPresent(), "its review announced the control topic a yes creates");

      ApplyReport again = cleanup.apply(plans.render(plan), ApplyOptions.of(control));
      assertEquals(ApplyReport.Outcome.ALREADY_APPLIED, again.outcome());

      RecoveryPolicy policy = RecoveryPolicy.enforced(topic, control);
      RecoveryVerdict allowed = cleanup.checkRecovery(List.of(c1), policy);
      assertEquals(topic, allowed.topic());
      RecoveryRefusalException refused =
          assertThrows(
              RecoveryRefusalException.class, () -> cleanup.checkRecovery(List.of(c0), policy));
      assertEquals(
          new CleanupError.BoundaryViolation(topic, 0, 100, 150), refused.error(), refused.getMessage());
      assertEquals(FailureClass.RESTORE_REFUSED, refused.failureClass());
      assertEquals(
          List.of(
              new CleanupError.BoundaryViolation(topic, 0, 100, 150),
              new CleanupError.BoundaryViolation(topic, 1, 40, 60)),
          refused.violations());
      assertTrue(
          refused.getMessage().contains("100") && refused.getMessage().contains("150"),
          refused.getMessage());
      String hint = refused.hint().orElse("");
      assertTrue(
          hint.contains("committed by plan " + plan.planId() + " from recovery point C1")
              && hint.contains("restore from C1 or a recovery point taken after it"),
          hint);

      StatusReport status = cleanup.status(control);
      assertEquals(1, status.operations().size());
      assertEquals(Status.APPLIED, status.operations().get(0).status());
      // When it was COMMITTED and APPLIED: the control records' Kafka timestamps, just now.
      StatusReport.PlanTimes times = status.times().get(0);
      long now = System.currentTimeMillis();
      long committedAt = times.committedAt().orElseThrow();
      long appliedAt = times.appliedAt().orElseThrow();
      assertTrue(
          now - 120_000 < committedAt && committedAt <= appliedAt && appliedAt <= now + 1_000,
          times + " at " + now);
      assertEquals(
          List.of(
              new StatusReport.BoundaryOrigin(0, plan.planId()),
              new StatusReport.BoundaryOrigin(1, plan.planId())),
          status.boundaryOrigins());

      try (RecoverySession session = cleanup.startRecovery(topic, policy)) {
        CleanupException fromC0 =
            assertThrows(
                CleanupException.class,
                () -> session.restore(List.of(c0), ReplayOptions.defaults()));
        assertEquals("boundary-violation", fromC0.kind());
        RecoveryVerdict verdict = session.restore(List.of(c1), ReplayOptions.defaults());
        assertEquals(150, verdict.ranges().get(0).requested());
        List<ReplayBatch.Record> replayed = new ArrayList<>();
        ReplayBatch batch;
        int calls = 0;
        do {
          batch = session.nextBatch(7);
          replayed.addAll(batch.records());
          assertTrue(++calls < 1000, "replay did not finish");
        } while (!batch.done());
        assertEquals(30, replayed.size(), "exactly [150, 180) of partition 0, nothing of 1");
        for (int i = 0; i < replayed.size(); i++) {
          ReplayBatch.Record r = replayed.get(i);
          assertEquals(0, r.partition());
          assertEquals(150 + i, r.offset());
          assertEquals("action-0-" + (150 + i), r.key());
          assertEquals("{\"action\":" + (150 + i) + ",\"done\":true}", r.value());
        }
        assertTrue(session.nextBatch(5).done(), "done stays done");
        String marker = session.snapshotMarker();
        assertFalse(marker.isBlank());
        assertTrue(marker.contains("\"0\":180"), marker);
      }
    }
  }
}

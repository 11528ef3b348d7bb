package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * {@code plans.message} renders every case of {@code cleanup-error}: each case lowered by hand
 * (including the flattened variant's joined i64 slots) reaches the component intact.
 */
class MessageTest {
  private final Plans plans = Components.plans();

  @Test
  void textCasesAreTheirSentence() {
    List<CleanupError> cases =
        List.of(
            new CleanupError.InvalidPlan("Cleanup plan is missing offsets"),
            new CleanupError.InvalidMarker("a"),
            new CleanupError.InvalidArgument("b"),
            new CleanupError.UnsafeTopicConfig("c"),
            new CleanupError.InvalidControlTopic("d"),
            new CleanupError.ControlTopicCorrupt("e"),
            new CleanupError.RecoveryRefused("f"),
            new CleanupError.ConflictingPolicies("g"),
            new CleanupError.Fenced("h"),
            new CleanupError.ReplayStalled("i"),
            new CleanupError.ReplayRecordInvalid("ü ✓ 𝄞"),
            new CleanupError.InvalidSnapshot("j"));
    for (CleanupError error : cases) {
      String detail = error.toString().replaceAll("^[A-Za-z]+\\[detail=(.*)\\]$", "$1");
      assertEquals(detail, plans.message(error), error.kind());
    }
  }

  @Test
  void boundaryViolationNamesPartitionRequestedOffsetAndBoundary() {
    assertEquals(
        "Cannot restore Kafka action state for orders-3 from offset 100 because the committed"
            + " cleanup boundary is 9223372036854775807",
        plans.message(new CleanupError.BoundaryViolation("orders", 3, 100, Long.MAX_VALUE)));
  }

  @Test
  void boundaryRegression() {
    assertEquals(
        "Cleanup plan abc does not advance the committed boundary: partition 2147483647 would"
            + " move from 150 back to 100",
        plans.message(new CleanupError.BoundaryRegression("abc", Integer.MAX_VALUE, 100, 150)));
  }

  @Test
  void topicChangedInItsFourForms() {
    assertEquals(
        "Kafka action-state topic t does not exist (checked before delete); expected ID A",
        plans.message(
            new CleanupError.TopicChanged(
                "t", "checked before delete", "A", "", List.of(0, 1), List.of())));
    assertEquals(
        "Kafka action-state topic t changed (ctx): expected ID ygFlQI50RqmgPT_6YH-HZw but found"
            + " _dCxXk8LR-qHr1Z2nQkB9w; the topic may have been recreated",
        plans.message(
            new CleanupError.TopicChanged(
                "t", "ctx", "ygFlQI50RqmgPT_6YH-HZw", "_dCxXk8LR-qHr1Z2nQkB9w", List.of(0),
                List.of(0))));
    // An expected ID that no Kafka topic can have is named as such, not as a recreated topic.
    assertEquals(
        "Kafka action-state topic t has topic ID B (ctx), but the expected ID A is not a Kafka"
            + " topic ID (Kafka writes 16 bytes as 22 characters of URL-safe base64, as"
            + " kafka-topics.sh --describe prints them), so it names no Kafka topic",
        plans.message(
            new CleanupError.TopicChanged("t", "ctx", "A", "B", List.of(0), List.of(0))));
    assertEquals(
        "Kafka action-state topic t changed partitions (ctx): expected [0, 1] but found [0, 1, 2]",
        plans.message(
            new CleanupError.TopicChanged("t", "ctx", "A", "A", List.of(0, 1), List.of(0, 1, 2))));
  }

  @Test
  void rangeViolationsWithAndWithoutKnownBounds() {
    assertEquals(
        "Offset 500 of t-1 is not available: the available range is [10, 400]",
        plans.message(
            new CleanupError.OffsetsUnavailable(
                new CleanupError.RangeViolation(
                    "t", 1, 500, OptionalLong.of(10), OptionalLong.of(400)))));
    assertEquals(
        "Offset 500 of t-1 is not available: the available range is [unknown, unknown]",
        plans.message(
            new CleanupError.OffsetsUnavailable(
                new CleanupError.RangeViolation(
                    "t", 1, 500, OptionalLong.empty(), OptionalLong.empty()))));
    assertEquals(
        "Kafka cleanup for t-0 requested offset 150 but beginning offset is 100; the plan stays"
            + " COMMITTED and can be applied again",
        plans.message(
            new CleanupError.DeleteUnverified(
                new CleanupError.RangeViolation(
                    "t", 0, 150, OptionalLong.of(100), OptionalLong.empty()))));
  }

  @Test
  void kafkaWithoutACause() {
    assertEquals(
        "Kafka delete-records failed: Broker: Not leader for partition",
        plans.message(
            new CleanupError.Kafka("delete-records", "Broker: Not leader for partition", true)));
  }

  @Test
  void kafkaWithEveryKindOfCauseIsStillItsSentence() {
    // The typed cause (s32 code, name, message) sits after the sentence in the record; every
    // kind and a negative librdkafka code lower without disturbing the fields before it.
    for (CleanupError.KafkaErrorKind kind : CleanupError.KafkaErrorKind.values()) {
      CleanupError error =
          new CleanupError.Kafka(
              "read-control-log",
              "Kafka read-control-log of t failed: Local: Timed out ✓",
              kind == CleanupError.KafkaErrorKind.TIMEOUT,
              Optional.of(
                  new CleanupError.KafkaError(kind, -185, "_TIMED_OUT", "Local: Timed out")));
      assertEquals(
          "Kafka read-control-log failed: Kafka read-control-log of t failed: Local: Timed out ✓",
          plans.message(error),
          kind.witName());
    }
  }
}

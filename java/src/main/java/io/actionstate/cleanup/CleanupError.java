package io.actionstate.cleanup;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Every way an operation of the component can refuse or fail: the WIT variant
 * {@code cleanup-error}, one record per case with the case's fields. {@link Plans#message}
 * renders any of them as the one sentence every host prints.
 */
public sealed interface CleanupError {
  /** The WIT case name, e.g. {@code "invalid-plan"}. */
  String kind();

  /** A plan document or value breaks a rule of SPEC §2; nothing was done. */
  record InvalidPlan(String detail) implements CleanupError {
    public String kind() {
      return "invalid-plan";
    }
  }

  /** A recovery marker breaks a rule of SPEC §2–§3; nothing was done. */
  record InvalidMarker(String detail) implements CleanupError {
    public String kind() {
      return "invalid-marker";
    }
  }

  /** An argument is out of range or contradicts another; nothing was done. */
  record InvalidArgument(String detail) implements CleanupError {
    public String kind() {
      return "invalid-argument";
    }
  }

  /** A restore asks for an offset below the committed boundary. */
  record BoundaryViolation(String topic, int partition, long requested, long boundary)
      implements CleanupError {
    public String kind() {
      return "boundary-violation";
    }
  }

  /** A plan does not advance the effective boundary; nothing was committed. */
  record BoundaryRegression(String planId, int partition, long planned, long boundary)
      implements CleanupError {
    public String kind() {
      return "boundary-regression";
    }
  }

  /** The live data topic is not the physical topic that was expected. */
  record TopicChanged(
      String topic,
      String context,
      String expectedTopicId,
      String foundTopicId,
      List<Integer> expectedPartitions,
      List<Integer> foundPartitions)
      implements CleanupError {
    public TopicChanged {
      expectedPartitions = List.copyOf(expectedPartitions);
      foundPartitions = List.copyOf(foundPartitions);
    }

    public String kind() {
      return "topic-changed";
    }
  }

  /** The data topic's configuration would let Kafka delete records on its own. */
  record UnsafeTopicConfig(String detail) implements CleanupError {
    public String kind() {
      return "unsafe-topic-config";
    }
  }

  /** The control topic is missing, has more than one partition or is not compact-only. */
  record InvalidControlTopic(String detail) implements CleanupError {
    public String kind() {
      return "invalid-control-topic";
    }
  }

  /** An offset outside what Kafka can serve, or a deletion Kafka did not complete. */
  record RangeViolation(
      String topic, int partition, long requested, OptionalLong beginning, OptionalLong end) {
    public RangeViolation {
      Objects.requireNonNull(beginning, "beginning");
      Objects.requireNonNull(end, "end");
    }
  }

  /** A plan or restore offset lies outside [beginning, end] of its partition. */
  record OffsetsUnavailable(RangeViolation range) implements CleanupError {
    public String kind() {
      return "offsets-unavailable";
    }
  }

  /** After deletion a partition still begins below its target; the plan stays COMMITTED. */
  record DeleteUnverified(RangeViolation range) implements CleanupError {
    public String kind() {
      return "delete-unverified";
    }
  }

  /** The control topic breaks an integrity rule of SPEC §7; apply and recovery stop. */
  record ControlTopicCorrupt(String detail) implements CleanupError {
    public String kind() {
      return "control-topic-corrupt";
    }
  }

  /** The recovery decision table refuses. */
  record RecoveryRefused(String detail) implements CleanupError {
    public String kind() {
      return "recovery-refused";
    }
  }

  /** Cleanup and per-key tombstones were both enabled. */
  record ConflictingPolicies(String detail) implements CleanupError {
    public String kind() {
      return "conflicting-policies";
    }
  }

  /** Another writer holds the control topic. */
  record Fenced(String detail) implements CleanupError {
    public String kind() {
      return "fenced";
    }
  }

  /** Replay made no progress within the configured window. */
  record ReplayStalled(String detail) implements CleanupError {
    public String kind() {
      return "replay-stalled";
    }
  }

  /** A replayed record could not be decoded. */
  record ReplayRecordInvalid(String detail) implements CleanupError {
    public String kind() {
      return "replay-record-invalid";
    }
  }

  /**
   * A Flink checkpoint or savepoint file cannot be read (truncated, corrupt, or a format the
   * reader does not know); the sentence names the file, the byte offset and what was expected.
   */
  record InvalidSnapshot(String detail) implements CleanupError {
    public String kind() {
      return "invalid-snapshot";
    }
  }

  /**
   * A Kafka step of the component that failed after the component's own retries: the step
   * ({@code operation}, e.g. {@code "delete-records"}), the one sentence every host prints,
   * whether running the same command again may succeed, and the last error the host reported
   * when the failure came from a capability call.
   */
  record Kafka(String operation, String message, boolean retriable, Optional<KafkaError> cause)
      implements CleanupError {
    public Kafka {
      Objects.requireNonNull(cause, "cause");
    }

    /** A failure without a host-reported cause. */
    public Kafka(String operation, String message, boolean retriable) {
      this(operation, message, retriable, Optional.empty());
    }

    public String kind() {
      return "kafka";
    }
  }

  /**
   * What a host reported about a failed Kafka operation (WIT {@code kafka-error}): the case a
   * caller must tell apart and the client's {@code kafka-detail}: the Kafka protocol code (or
   * the client library's own, negative for librdkafka, 0 when none), its name (may be empty)
   * and the client's explanation verbatim.
   */
  record KafkaError(KafkaErrorKind kind, int code, String name, String message) {
    public KafkaError {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(message, "message");
    }
  }

  /** The cases of WIT {@code kafka-error}, in declaration order (the ordinal is the case). */
  enum KafkaErrorKind {
    UNKNOWN_TOPIC("unknown-topic"),
    AUTHORIZATION("authorization"),
    AUTHENTICATION("authentication"),
    TIMEOUT("timeout"),
    TRANSPORT("transport"),
    NOT_LEADER("not-leader"),
    FENCED("fenced"),
    POLICY_VIOLATION("policy-violation"),
    OFFSET_OUT_OF_RANGE("offset-out-of-range"),
    OTHER("other");

    private final String witName;

    KafkaErrorKind(String witName) {
      this.witName = witName;
    }

    /** The WIT case name, e.g. {@code "not-leader"}. */
    public String witName() {
      return witName;
    }
  }
}

package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
import java.util.Objects;
import java.util.Optional;

/**
 * How the runtime is configured to recover (WIT {@code recovery.recovery-policy}).
 *
 * @param topic the data topic the runtime is configured with (markers of another topic are
 *     refused); empty: the topic the first versioned marker names
 * @param controlTopic the control topic; empty means standard recovery without enforcement
 * @param tombstonesEnabled whether per-key tombstones are enabled (they conflict with cleanup)
 */
public record RecoveryPolicy(
    Optional<String> topic, Optional<String> controlTopic, boolean tombstonesEnabled) {
  public RecoveryPolicy {
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(controlTopic, "controlTopic");
  }

  /** Enforce the committed boundary of {@code controlTopic} on {@code topic}. */
  public static RecoveryPolicy enforced(String topic, String controlTopic) {
    return new RecoveryPolicy(Optional.of(topic), Optional.of(controlTopic), false);
  }

  Object[] lower() {
    return new Object[] {
      topic.<Case>map(t -> new Case(1, t)).orElse(new Case(0, null)),
      controlTopic.<Case>map(t -> new Case(1, t)).orElse(new Case(0, null)),
      tombstonesEnabled
    };
  }
}

package io.actionstate.cleanup;

import java.util.Objects;

/**
 * How to apply (WIT {@code coordinator.apply-options}).
 *
 * @param controlTopic the control topic; must differ from the data topic
 * @param replicationFactor used only if apply creates the control topic (1 ..= 32767)
 * @param dryRun run every check and return the preview without committing anything
 * @param startNewHistory create a missing control topic even when the data topic was already
 *     cleaned (see the WIT)
 */
public record ApplyOptions(
    String controlTopic, int replicationFactor, boolean dryRun, boolean startNewHistory) {
  public ApplyOptions {
    Objects.requireNonNull(controlTopic, "controlTopic");
    if (replicationFactor < 0 || replicationFactor > 0xFFFF) {
      throw new IllegalArgumentException("replication factor " + replicationFactor
          + " is not a u16 (the component refuses anything outside 1 ..= 32767)");
    }
  }

  /** Apply for real with this control topic and replication factor 1. */
  public static ApplyOptions of(String controlTopic) {
    return new ApplyOptions(controlTopic, 1, false, false);
  }

  Object[] lower() {
    return new Object[] {controlTopic, (long) replicationFactor, dryRun, startNewHistory};
  }
}

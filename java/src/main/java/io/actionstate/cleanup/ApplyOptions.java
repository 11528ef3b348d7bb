package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * How to apply (WIT {@code coordinator.apply-options}).
 *
 * @param controlTopic the control topic; must differ from the data topic
 * @param replicationFactor used only if apply creates the control topic (1 ..= 32767); empty:
 *     the production default the component reads from the cluster (3, or the number of brokers
 *     when there are fewer, whatever the brokers' {@code default.replication.factor} says, with
 *     {@code min.insync.replicas} 2 from 3 replicas on)
 * @param dryRun run every check and return the preview without committing anything
 * @param startNewHistory create a missing control topic even when the data topic was already
 *     cleaned (see the WIT)
 */
public record ApplyOptions(
    String controlTopic, OptionalInt replicationFactor, boolean dryRun, boolean startNewHistory) {
  public ApplyOptions {
    Objects.requireNonNull(controlTopic, "controlTopic");
    Objects.requireNonNull(replicationFactor, "replicationFactor");
    if (replicationFactor.isPresent()
        && (replicationFactor.getAsInt() < 0 || replicationFactor.getAsInt() > 0xFFFF)) {
      throw new IllegalArgumentException("replication factor " + replicationFactor.getAsInt()
          + " is not a u16 (the component refuses anything outside 1 ..= 32767)");
    }
  }

  /** Apply for real with this control topic and, if it must be created, the production default. */
  public static ApplyOptions of(String controlTopic) {
    return new ApplyOptions(controlTopic, OptionalInt.empty(), false, false);
  }

  /** These options with a replication factor of the caller's choice for a new control topic. */
  public ApplyOptions withReplicationFactor(int factor) {
    return new ApplyOptions(controlTopic, OptionalInt.of(factor), dryRun, startNewHistory);
  }

  Object[] lower() {
    Object factor =
        replicationFactor.isPresent()
            ? new Case(1, (long) replicationFactor.getAsInt())
            : new Case(0, null);
    return new Object[] {controlTopic, factor, dryRun, startNewHistory};
  }
}

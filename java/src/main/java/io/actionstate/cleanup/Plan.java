package io.actionstate.cleanup;

import java.util.List;
import java.util.Objects;

/**
 * A cleanup plan (WIT {@code plan}, SPEC §2). Plans returned by {@link Plans} are validated: the
 * ID is the SHA-256 of the contents and {@code offsets} ascend by partition.
 *
 * @param schemaVersion always 1
 * @param planId 64 lowercase hex characters
 * @param sourceRecoveryPoint the checkpoint or savepoint the plan was computed from
 * @param topic the data topic
 * @param topicId Kafka's 22-character URL-safe base64 topic UUID
 * @param offsets the first offset to keep, per partition
 */
public record Plan(
    int schemaVersion,
    String planId,
    String sourceRecoveryPoint,
    String topic,
    String topicId,
    List<PartitionOffset> offsets) {
  public Plan {
    Objects.requireNonNull(planId, "planId");
    Objects.requireNonNull(sourceRecoveryPoint, "sourceRecoveryPoint");
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(topicId, "topicId");
    offsets = List.copyOf(offsets);
  }
}

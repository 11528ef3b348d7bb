package org.apache.flink.agents.runtime.actionstate;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * The versioned recovery marker as Flink Agents keeps it in union list state
 * {@code recoveryMarker} (SPEC §9): this job stands in for Flink Agents, so it declares a class of
 * the same package, name and fields. Flink's generic Kryo serializer writes the class name and the
 * fields in alphabetical order ({@code offsets}, a {@code Map<Integer, Long>} held as a {@code java.util.HashMap},
 * {@code schemaVersion}, {@code topic}, {@code topicId}), which is exactly what the snapshot reader
 * of {@code action-state-cleanup plan --checkpoint} looks for.
 */
public class KafkaActionStateRecoveryMarker implements Serializable {
  private static final long serialVersionUID = 1L;

  private int schemaVersion;
  private String topic;
  private String topicId;
  private Map<Integer, Long> offsets;

  /** Kryo instantiates through this. */
  public KafkaActionStateRecoveryMarker() {}

  public KafkaActionStateRecoveryMarker(
      int schemaVersion, String topic, String topicId, Map<Integer, Long> offsets) {
    this.schemaVersion = schemaVersion;
    this.topic = topic;
    this.topicId = topicId;
    this.offsets = new HashMap<>(offsets);
  }

  public int getSchemaVersion() {
    return schemaVersion;
  }

  public String getTopic() {
    return topic;
  }

  public String getTopicId() {
    return topicId;
  }

  public Map<Integer, Long> getOffsets() {
    return offsets;
  }

  @Override
  public String toString() {
    return "KafkaActionStateRecoveryMarker{schemaVersion=" + schemaVersion + ", topic='" + topic
        + "', topicId='" + topicId + "', offsets=" + offsets + "}";
  }
}

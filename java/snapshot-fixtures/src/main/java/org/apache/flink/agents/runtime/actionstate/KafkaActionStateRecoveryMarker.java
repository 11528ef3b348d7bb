package org.apache.flink.agents.runtime.actionstate;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * Stand-in for Flink Agents' versioned recovery marker: same package, class name and fields, so
 * Flink's generic Kryo serializer writes exactly the bytes the real class would (class name, then
 * the fields in alphabetical order: offsets, schemaVersion, topic, topicId). Only that serialized
 * shape matters here; the real class's validation and accessors are not reproduced.
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

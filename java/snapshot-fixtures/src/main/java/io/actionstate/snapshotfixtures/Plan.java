package io.actionstate.snapshotfixtures;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.agents.runtime.actionstate.KafkaActionStateRecoveryMarker;

/**
 * The Flink Agents Java tool's plan computation (KafkaActionStateCleanupPlan.fromRecoveryMarkers,
 * its constructor checks and its Jackson pretty-printed file form), re-implemented from SPEC §2/§3
 * and the catalogue of its behaviour, with its exception messages verbatim.
 */
final class Plan {
  static final String ZERO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";

  final String source;
  final String topic;
  final String topicId;
  final TreeMap<Integer, Long> offsets;
  final String planId;

  private Plan(String source, String topic, String topicId, Map<Integer, Long> offsets) {
    if (source == null || source.trim().isEmpty()) {
      throw new IllegalArgumentException("source recovery point must not be blank");
    }
    if (topic == null || topic.trim().isEmpty()) {
      throw new IllegalArgumentException("Kafka action-state topic must not be blank");
    }
    if (topicId == null || topicId.trim().isEmpty()) {
      throw new IllegalArgumentException("Kafka action-state topic ID must not be blank");
    }
    if (ZERO_TOPIC_ID.equals(topicId)) {
      throw new IllegalArgumentException(
          "Checkpoint-aligned cleanup requires a broker-provided Kafka topic ID");
    }
    if (offsets.isEmpty()) {
      throw new IllegalArgumentException("Cleanup offsets must not be empty");
    }
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      if (e.getKey() < 0) {
        throw new IllegalArgumentException("Kafka partition must be non-negative");
      }
      if (e.getValue() < 0) {
        throw new IllegalArgumentException("Kafka cleanup offset must be non-negative");
      }
    }
    this.source = source;
    this.topic = topic;
    this.topicId = topicId;
    this.offsets = new TreeMap<>(offsets);
    this.planId = planId(source, topic, topicId, this.offsets);
  }

  /** fromRecoveryMarkers, step for step (catalogue §2.1). */
  static Plan fromRecoveryMarkers(String source, List<Object> markers) {
    if (markers.isEmpty()) {
      throw new IllegalArgumentException("Recovery markers must not be empty");
    }
    String topic = null;
    String topicId = null;
    Map<Integer, Long> merged = null;
    for (Object m : markers) {
      if (!(m instanceof KafkaActionStateRecoveryMarker)) {
        throw new IllegalArgumentException(String.format(
            "Checkpoint-aligned cleanup requires versioned Kafka recovery markers; legacy or unsupported marker found: %s",
            m == null ? "null" : m.getClass().getName()));
      }
      KafkaActionStateRecoveryMarker marker = (KafkaActionStateRecoveryMarker) m;
      if (marker.getSchemaVersion() != 1) {
        throw new IllegalArgumentException(
            String.format("Unsupported Kafka recovery marker schema %s", marker.getSchemaVersion()));
      }
      if (merged == null) {
        topic = marker.getTopic();
        topicId = marker.getTopicId();
        merged = new HashMap<>(marker.getOffsets());
        continue;
      }
      if (!topic.equals(marker.getTopic()) || !topicId.equals(marker.getTopicId())) {
        throw new IllegalArgumentException(
            "Recovery markers do not reference one physical Kafka topic");
      }
      if (!merged.keySet().equals(marker.getOffsets().keySet())) {
        throw new IllegalArgumentException(
            "Recovery markers contain different Kafka partition sets");
      }
      for (Map.Entry<Integer, Long> e : marker.getOffsets().entrySet()) {
        merged.merge(e.getKey(), e.getValue(), Math::min);
      }
    }
    return new Plan(source, topic, topicId, merged);
  }

  static String planId(String source, String topic, String topicId, TreeMap<Integer, Long> offsets) {
    StringBuilder canonical = new StringBuilder();
    canonical.append("1\n").append(source).append('\n').append(topic).append('\n')
        .append(topicId).append('\n');
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      canonical.append(e.getKey()).append('=').append(e.getValue()).append('\n');
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(canonical.toString().getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder();
      for (byte b : digest) {
        hex.append(String.format("%02x", b));
      }
      return hex.toString();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The plan file: Jackson's default pretty printer plus one LF (SPEC §2). */
  String text() {
    StringBuilder b = new StringBuilder();
    b.append("{\n");
    b.append("  \"schemaVersion\" : 1,\n");
    b.append("  \"planId\" : ").append(Json.str(planId)).append(",\n");
    b.append("  \"sourceRecoveryPoint\" : ").append(Json.str(source)).append(",\n");
    b.append("  \"topic\" : ").append(Json.str(topic)).append(",\n");
    b.append("  \"topicId\" : ").append(Json.str(topicId)).append(",\n");
    b.append("  \"offsets\" : {\n");
    int i = 0;
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      b.append("    \"").append(e.getKey()).append("\" : ").append(e.getValue());
      b.append(++i < offsets.size() ? ",\n" : "\n");
    }
    b.append("  }\n");
    b.append("}\n");
    return b.toString();
  }

  /** SPEC §2's required test vector; generation stops if this code disagrees with it. */
  static void checkTestVector() {
    TreeMap<Integer, Long> o = new TreeMap<>();
    o.put(0, 10L);
    o.put(1, 20L);
    String id = planId("checkpoint-42", "action-state", "topic-id", o);
    if (!id.equals("99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d")) {
      throw new IllegalStateException("plan ID code disagrees with the SPEC §2 test vector: " + id);
    }
    String expected = "{\n  \"schemaVersion\" : 1,\n"
        + "  \"planId\" : \"99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d\",\n"
        + "  \"sourceRecoveryPoint\" : \"checkpoint-42\",\n  \"topic\" : \"action-state\",\n"
        + "  \"topicId\" : \"topic-id\",\n  \"offsets\" : {\n    \"0\" : 10,\n    \"1\" : 20\n  }\n}\n";
    String text = new Plan("checkpoint-42", "action-state", "topic-id", o).text();
    if (!text.equals(expected)) {
      throw new IllegalStateException("plan text disagrees with the SPEC §2 example:\n" + text);
    }
  }
}

package io.actionstate.flinkjob;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.agents.runtime.actionstate.KafkaActionStateRecoveryMarker;

/**
 * Between the two forms of a recovery marker: the JSON text the cleanup component reads and writes
 * (SPEC "Recovery marker") and the object Flink keeps in union list state {@code recoveryMarker}
 * (SPEC §9). The component validates every marker it is given; this class only moves fields, and
 * refuses an element it does not know with one sentence.
 */
final class Markers {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Markers() {}

  /** The state element for a marker the component wrote ({@code snapshot-marker}). */
  static KafkaActionStateRecoveryMarker fromJson(String json) {
    JsonNode node;
    try {
      node = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("The component's marker is not JSON: " + json, e);
    }
    Map<Integer, Long> offsets = new HashMap<>();
    for (Map.Entry<String, JsonNode> field : node.path("offsets").properties()) {
      offsets.put(Integer.parseInt(field.getKey()), field.getValue().longValue());
    }
    if (node.path("schemaVersion").asInt() != 1 || offsets.isEmpty()) {
      throw new IllegalStateException(
          "The component's marker is not a versioned marker with offsets: " + json);
    }
    return new KafkaActionStateRecoveryMarker(
        1, node.path("topic").asText(), node.path("topicId").asText(), offsets);
  }

  /**
   * The JSON text of a restored state element: a versioned marker, or a legacy bare
   * {@code Map<Integer, Long>} (written by runtimes before markers were versioned; the component
   * decides whether it may be restored).
   */
  static String toJson(Object element) {
    if (element instanceof KafkaActionStateRecoveryMarker marker) {
      ObjectNode node = JSON.createObjectNode();
      node.put("schemaVersion", marker.getSchemaVersion());
      node.put("topic", marker.getTopic());
      node.put("topicId", marker.getTopicId());
      node.set("offsets", offsets(marker.getOffsets()));
      return node.toString();
    }
    if (element instanceof Map<?, ?> legacy) {
      return offsets(legacy).toString();
    }
    throw new IllegalStateException(
        "Union list state recoveryMarker holds an element of class "
            + (element == null ? "null" : element.getClass().getName())
            + ", which is neither a KafkaActionStateRecoveryMarker nor a legacy offset map");
  }

  private static ObjectNode offsets(Map<?, ?> offsets) {
    ObjectNode node = JSON.createObjectNode();
    for (Map.Entry<?, ?> e : new TreeMap<>(offsets).entrySet()) {
      if (!(e.getKey() instanceof Integer partition) || !(e.getValue() instanceof Long offset)) {
        throw new IllegalStateException(
            "A recovery marker maps " + e.getKey() + " to " + e.getValue()
                + ", not a partition (Integer) to an offset (Long)");
      }
      node.put(Integer.toString(partition), offset);
    }
    return node;
  }
}

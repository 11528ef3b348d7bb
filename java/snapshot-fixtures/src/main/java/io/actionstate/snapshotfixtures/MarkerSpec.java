package io.actionstate.snapshotfixtures;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.agents.runtime.actionstate.KafkaActionStateRecoveryMarker;

/** What each subtask of the marker operator puts into its union state at every snapshot. */
public final class MarkerSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  public enum Kind {
    /** One versioned marker per subtask, all of one topic and topic ID. */
    VERSIONED,
    /** One legacy bare HashMap<Integer, Long> per subtask. */
    LEGACY,
    /** Versioned markers; subtask 0 names topicId, every other subtask topicId2. */
    TWO_TOPIC_IDS,
    /** The union state is registered but every subtask stores nothing. */
    EMPTY,
    /**
     * Versioned markers whose offsets advance with the checkpoint: VERSIONED's offsets plus
     * 7 * checkpoint ID on every partition, as a running job's would (older points need less).
     */
    ADVANCING
  }

  final Kind kind;
  final String topic;
  final String topicId;
  final String topicId2;
  final int partitions;
  final long baseOffset;
  final int parallelism;

  public MarkerSpec(
      Kind kind, String topic, String topicId, String topicId2, int partitions, long baseOffset,
      int parallelism) {
    this.kind = kind;
    this.topic = topic;
    this.topicId = topicId;
    this.topicId2 = topicId2;
    this.partitions = partitions;
    this.baseOffset = baseOffset;
    this.parallelism = parallelism;
  }

  /**
   * Subtask i, partition p: baseOffset + 10*p + ((p + i) mod parallelism). Every subtask is the
   * minimum on some partitions, so the plan (per-partition minimum) is no single subtask's marker.
   */
  HashMap<Integer, Long> offsets(int subtask) {
    HashMap<Integer, Long> offsets = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      offsets.put(p, baseOffset + 10L * p + ((p + subtask) % parallelism));
    }
    return offsets;
  }

  public List<Object> markersFor(int subtask, long checkpointId) {
    List<Object> list = new ArrayList<>();
    switch (kind) {
      case ADVANCING: {
        HashMap<Integer, Long> offsets = offsets(subtask);
        offsets.replaceAll((partition, offset) -> offset + 7 * checkpointId);
        list.add(new KafkaActionStateRecoveryMarker(1, topic, topicId, offsets));
        break;
      }
      case VERSIONED:
        list.add(new KafkaActionStateRecoveryMarker(1, topic, topicId, offsets(subtask)));
        break;
      case TWO_TOPIC_IDS:
        list.add(new KafkaActionStateRecoveryMarker(
            1, topic, subtask == 0 ? topicId : topicId2, offsets(subtask)));
        break;
      case LEGACY:
        list.add(offsets(subtask));
        break;
      case EMPTY:
        break;
      default:
        throw new IllegalStateException(kind.toString());
    }
    return list;
  }

  static Map<Integer, Long> copy(Map<Integer, Long> m) {
    return new HashMap<>(m);
  }
}

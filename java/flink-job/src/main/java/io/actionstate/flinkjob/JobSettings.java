package io.actionstate.flinkjob;

import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What the action operator is configured with; serialized into the job graph.
 *
 * @param kafka Kafka client properties ({@code bootstrap.servers}, {@code security.protocol},
 *     {@code sasl.*}, {@code ssl.*}) for the writer, the cleanup component and its replay
 * @param actionStateTopic the action-state topic ({@code cleanup.policy=compact,delete}, no
 *     retention): one record per completed action
 * @param effectsTopic where each action's side effect goes: one record per action
 * @param controlTopic the cleanup control topic; {@code null} restores without enforcing a
 *     boundary (SPEC §6, standard recovery)
 * @param transactionalIdPrefix subtask {@code i} writes with transactional id
 *     {@code <prefix>-<i>}; unique per job, stable across its restarts
 * @param replayBatchSize at most this many action-state records per replay step
 * @param replayPause the pause between two replay steps: zero in production; tests slow the replay
 *     down with it so that checkpoints are taken while it is unfinished
 * @param maxBufferedActions actions that arrive during replay wait in memory (and in checkpoints);
 *     beyond this many the operator finishes the replay at once instead
 * @param operationTimeout how long one Kafka step of the component may take, retries included
 * @param elementPause how long the operator spends on each arriving action before anything else:
 *     zero in production; tests use it to stand for per-action work that takes time, so that
 *     in-flight data waits in front of the operator (and drains slowly after a restore)
 * @param declinedSnapshots how many checkpoints subtask 0 fails to write while it replays, in
 *     each attempt ({@link FailingWriteSerializer}): zero in production; tests use it to make
 *     Flink decline a checkpoint taken during recovery
 */
public record JobSettings(
    Map<String, String> kafka,
    String actionStateTopic,
    String effectsTopic,
    String controlTopic,
    String transactionalIdPrefix,
    int replayBatchSize,
    Duration replayPause,
    int maxBufferedActions,
    Duration operationTimeout,
    Duration elementPause,
    int declinedSnapshots)
    implements Serializable {

  public JobSettings {
    kafka = new HashMap<>(Objects.requireNonNull(kafka, "kafka"));
    Objects.requireNonNull(actionStateTopic, "actionStateTopic");
    Objects.requireNonNull(effectsTopic, "effectsTopic");
    Objects.requireNonNull(transactionalIdPrefix, "transactionalIdPrefix");
    Objects.requireNonNull(replayPause, "replayPause");
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    Objects.requireNonNull(elementPause, "elementPause");
    if (replayBatchSize < 1 || maxBufferedActions < 0 || declinedSnapshots < 0) {
      throw new IllegalArgumentException(
          "replayBatchSize must be at least 1, maxBufferedActions and declinedSnapshots at least"
              + " 0, but got " + replayBatchSize + ", " + maxBufferedActions + " and "
              + declinedSnapshots);
    }
  }

  /**
   * Production defaults: replay in steps of 5,000 records without pauses, up to 100,000 buffered
   * actions, 30 s per Kafka step, transactional ids named after the two topics.
   */
  public static JobSettings of(
      Map<String, String> kafka,
      String actionStateTopic,
      String effectsTopic,
      String controlTopic) {
    return new JobSettings(
        kafka,
        actionStateTopic,
        effectsTopic,
        controlTopic,
        "actions-" + actionStateTopic + "-" + effectsTopic,
        5_000,
        Duration.ZERO,
        100_000,
        Duration.ofSeconds(30),
        Duration.ZERO,
        0);
  }

  /** The same settings with replay in steps of {@code batchSize} records, {@code pause} apart. */
  public JobSettings withReplayPace(int batchSize, Duration pause) {
    return new JobSettings(
        kafka, actionStateTopic, effectsTopic, controlTopic, transactionalIdPrefix, batchSize,
        pause, maxBufferedActions, operationTimeout, elementPause, declinedSnapshots);
  }

  /** The same settings with {@code pause} spent on every arriving action. */
  public JobSettings withElementPause(Duration pause) {
    return new JobSettings(
        kafka, actionStateTopic, effectsTopic, controlTopic, transactionalIdPrefix,
        replayBatchSize, replayPause, maxBufferedActions, operationTimeout, pause,
        declinedSnapshots);
  }

  /** The same settings with subtask 0 declining the first {@code n} snapshots of its replay. */
  public JobSettings withDeclinedSnapshots(int n) {
    return new JobSettings(
        kafka, actionStateTopic, effectsTopic, controlTopic, transactionalIdPrefix,
        replayBatchSize, replayPause, maxBufferedActions, operationTimeout, elementPause, n);
  }
}

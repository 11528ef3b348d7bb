package io.actionstate.flinkjob;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Performs one action: its side effect (one record in the effects topic) and its completion (one
 * record in the action-state topic) in one Kafka transaction, so a read_committed reader sees both
 * or neither. A crash between the two writes therefore leaves no effect without its completion
 * record: the transaction is aborted when the subtask's next attempt opens its writer.
 *
 * <p>One writer per subtask, transactional id {@code <prefix>-<subtask>}: opening it
 * ({@code initTransactions}) fences every earlier attempt of the same subtask and completes or
 * aborts the transaction that attempt left open, before the operator captures the end of the
 * action-state topic for its replay (see README, "Exactly once").
 */
final class ActionWriter implements AutoCloseable {
  private final KafkaProducer<String, String> producer;
  private final String effectsTopic;
  private final String actionStateTopic;
  private final int statePartitions;
  private final int subtask;
  private final int attempt;

  private ActionWriter(JobSettings settings, int subtask, int attempt) {
    Map<String, Object> config = new HashMap<>(settings.kafka());
    config.put(
        ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.transactionalIdPrefix() + "-" + subtask);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    this.producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    this.effectsTopic = settings.effectsTopic();
    this.actionStateTopic = settings.actionStateTopic();
    this.subtask = subtask;
    this.attempt = attempt;
    try {
      producer.initTransactions();
      this.statePartitions = producer.partitionsFor(actionStateTopic).size();
    } catch (RuntimeException e) {
      producer.close();
      throw e;
    }
  }

  /** Opens subtask {@code subtask}'s writer, fencing its earlier attempts. */
  static ActionWriter open(JobSettings settings, int subtask, int attempt) {
    return new ActionWriter(settings, subtask, attempt);
  }

  /** The action-state partition of an action: its id modulo the partition count. */
  int partitionOf(long action) {
    return (int) (action % statePartitions);
  }

  /**
   * The effect and the completion record of {@code action}, committed together. Any failure
   * propagates: the task fails, and its next attempt aborts whatever this one left open.
   */
  void perform(long action) {
    producer.beginTransaction();
    producer.send(
        new ProducerRecord<>(
            effectsTopic,
            Long.toString(action),
            "{\"action\":" + action + ",\"subtask\":" + subtask + ",\"attempt\":" + attempt + "}"));
    producer.send(
        new ProducerRecord<>(
            actionStateTopic,
            partitionOf(action),
            ActionKeys.key(action),
            "{\"action\":" + action + ",\"done\":true}"));
    producer.commitTransaction();
  }

  @Override
  public void close() {
    producer.close();
  }
}

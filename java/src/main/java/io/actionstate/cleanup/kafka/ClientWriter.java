package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.capability.Capabilities.Writer;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code kafka-writer.writer} over one {@link KafkaProducer} (acks=all, idempotent,
 * linger.ms=0, request and delivery timeout = the operation timeout, blocking for metadata bounded
 * by one request's bound), kept until the component
 * drops the writer. A transactional writer is initialised (InitProducerId, which fences earlier
 * producers of the id) before {@link #open} returns and wraps each append in a transaction of its
 * own. Nothing here retries beyond what the producer's delivery timeout bounds.
 */
final class ClientWriter implements Writer {
  /** Within the broker's default transaction.max.timeout.ms (15 minutes). */
  private static final int TRANSACTION_TIMEOUT_MS = 60_000;

  private final KafkaProducer<String, String> producer;
  private final boolean transactional;
  private KafkaFailure fenced;

  private ClientWriter(KafkaProducer<String, String> producer, boolean transactional) {
    this.producer = producer;
    this.transactional = transactional;
  }

  static ClientWriter open(
      Map<String, Object> client,
      int operationTimeoutMs,
      int requestBoundMs,
      Optional<String> transactionalId)
      throws KafkaFailure {
    Map<String, Object> config = new HashMap<>(client);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, operationTimeoutMs);
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, operationTimeoutMs);
    // How long send() may wait for metadata and InitProducerId or a commit may block: one
    // request's bound. (Java's producer waits out this bound for a topic that does not exist,
    // where librdkafka answers at once; the component's next attempt follows within the step.)
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, requestBoundMs);
    transactionalId.ifPresent(
        id -> {
          config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
          config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
        });
    KafkaProducer<String, String> producer;
    try {
      producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    } catch (RuntimeException e) {
      throw KafkaErrors.failure(e);
    }
    if (transactionalId.isPresent()) {
      try {
        producer.initTransactions();
      } catch (RuntimeException e) {
        producer.close(Duration.ZERO);
        throw KafkaErrors.failure(e);
      }
    }
    return new ClientWriter(producer, transactionalId.isPresent());
  }

  @Override
  public long append(String topic, int partition, String key, String value) throws KafkaFailure {
    if (fenced != null) {
      throw fenced;
    }
    ProducerRecord<String, String> record = new ProducerRecord<>(topic, partition, key, value);
    if (!transactional) {
      try {
        return producer.send(record).get().offset();
      } catch (ExecutionException | RuntimeException e) {
        throw KafkaErrors.failure(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw KafkaErrors.failure(e);
      }
    }
    boolean begun = false;
    try {
      producer.beginTransaction();
      begun = true;
      long offset = producer.send(record).get().offset();
      producer.commitTransaction();
      return offset;
    } catch (ExecutionException | RuntimeException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      KafkaFailure failure = KafkaErrors.failure(e);
      if (KafkaErrors.fenced(e)) {
        fenced = failure;
      } else if (begun) {
        try {
          producer.abortTransaction();
        } catch (RuntimeException abortFailed) {
          // The client does not allow it (e.g. a fatal error): the next append reports why.
        }
      }
      throw failure;
    }
  }

  @Override
  public void close() {
    producer.close(Duration.ZERO);
  }
}

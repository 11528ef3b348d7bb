package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.PartitionOffset;
import io.actionstate.cleanup.capability.Capabilities.Consumer;
import io.actionstate.cleanup.capability.Capabilities.PolledBatch;
import io.actionstate.cleanup.capability.Capabilities.PolledRecord;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code kafka-consumer.consumer} over one assign-only {@link KafkaConsumer}: read_committed,
 * {@code auto.offset.reset=none} (a position outside the log is an error), no group, no commits.
 *
 * <p>Java's consumer fixes the most records per poll in its configuration, while the component
 * asks per call: records fetched beyond {@code max-records} wait here, in delivery order, for the
 * next poll, and {@link #position} reports the first waiting record of a partition as its
 * position, so positions always describe what the component has been handed.
 */
final class ClientConsumer implements Consumer {
  /** Keys and values arrive as their texts ({@link Utf8Text}). */
  private final KafkaConsumer<Object, Object> consumer;
  private final String topic;
  private final ArrayDeque<ConsumerRecord<Object, Object>> waiting = new ArrayDeque<>();
  private List<PolledRecord> latest = List.of();

  ClientConsumer(Map<String, Object> client, int requestBoundMs, String topic) throws KafkaFailure {
    Map<String, Object> config = new HashMap<>(client);
    config.remove(ConsumerConfig.GROUP_ID_CONFIG);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestBoundMs);
    config.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, requestBoundMs);
    config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
    config.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
    try {
      this.consumer = new KafkaConsumer<>(config, new Utf8Text(), new Utf8Text());
    } catch (RuntimeException e) {
      throw KafkaErrors.failure(e);
    }
    this.topic = topic;
  }

  @Override
  public void assign(List<PartitionOffset> start) throws KafkaFailure {
    waiting.clear();
    try {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionOffset po : start) {
        partitions.add(new TopicPartition(topic, po.partition()));
      }
      consumer.assign(partitions);
      for (PartitionOffset po : start) {
        consumer.seek(new TopicPartition(topic, po.partition()), po.offset());
      }
    } catch (RuntimeException e) {
      throw KafkaErrors.failure(e);
    }
  }

  @Override
  public List<PartitionOffset> position() throws KafkaFailure {
    Map<Integer, Long> firstWaiting = new HashMap<>();
    for (ConsumerRecord<Object, Object> r : waiting) {
      firstWaiting.putIfAbsent(r.partition(), r.offset());
    }
    List<PartitionOffset> out = new ArrayList<>();
    try {
      List<TopicPartition> assigned = new ArrayList<>(consumer.assignment());
      assigned.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
      for (TopicPartition tp : assigned) {
        Long held = firstWaiting.get(tp.partition());
        if (held != null) {
          out.add(new PartitionOffset(tp.partition(), held));
          continue;
        }
        try {
          out.add(new PartitionOffset(tp.partition(), consumer.position(tp, Duration.ZERO)));
        } catch (org.apache.kafka.common.errors.TimeoutException unknown) {
          // Not known without asking the cluster: left out, as the WIT allows.
        }
      }
    } catch (RuntimeException e) {
      throw KafkaErrors.failure(e);
    }
    return out;
  }

  @Override
  public PolledBatch poll(int maxRecords, int timeoutMs, boolean withData) throws KafkaFailure {
    latest = List.of();
    if (waiting.isEmpty()) {
      try {
        for (ConsumerRecord<Object, Object> r : consumer.poll(Duration.ofMillis(timeoutMs))) {
          waiting.add(r);
        }
      } catch (RuntimeException e) {
        throw KafkaErrors.failure(e);
      }
    }
    int n = Math.min(Math.max(maxRecords, 1), waiting.size());
    int[] partitions = new int[n];
    long[] offsets = new long[n];
    byte[] flags = new byte[n];
    List<String> keys = withData ? new ArrayList<>(n) : List.of();
    List<String> values = withData ? new ArrayList<>(n) : List.of();
    long[] timestamps = new long[withData ? n : 0];
    List<PolledRecord> records = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ConsumerRecord<Object, Object> r = waiting.poll();
      Object key = r.key();
      Object value = r.value();
      String keyText = key instanceof String text ? text : null;
      String valueText = value instanceof String text ? text : null;
      boolean valid = key != Utf8Text.UNDECODABLE && value != Utf8Text.UNDECODABLE;
      partitions[i] = r.partition();
      offsets[i] = r.offset();
      flags[i] =
          (byte)
              ((key != null ? PolledBatch.HAS_KEY : 0)
                  | (value != null ? PolledBatch.HAS_VALUE : 0)
                  | (valid ? PolledBatch.UTF8 : 0));
      if (withData) {
        keys.add(valid ? keyText : null);
        values.add(valid ? valueText : null);
        // ConsumerRecord.NO_TIMESTAMP is -1, as the WIT has it.
        timestamps[i] = r.timestamp();
      }
      records.add(
          new PolledRecord(
              r.partition(), r.offset(), key != null, value != null, keyText, valueText));
    }
    latest = records;
    return new PolledBatch(partitions, offsets, flags, keys, values, timestamps);
  }

  @Override
  public PolledRecord polled(int index) {
    return latest.get(index);
  }

  @Override
  public void close() {
    consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ZERO));
  }
}

package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.PartitionOffset;
import io.actionstate.cleanup.capability.Capabilities.Consumer;
import io.actionstate.cleanup.capability.Capabilities.PolledBatch;
import io.actionstate.cleanup.capability.Capabilities.PolledRecord;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
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
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

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
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final String topic;
  private final ArrayDeque<ConsumerRecord<byte[], byte[]>> waiting = new ArrayDeque<>();
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
      this.consumer =
          new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
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
    for (ConsumerRecord<byte[], byte[]> r : waiting) {
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
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(timeoutMs))) {
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
    List<PolledRecord> records = new ArrayList<>(n);
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    for (int i = 0; i < n; i++) {
      ConsumerRecord<byte[], byte[]> r = waiting.poll();
      byte[] key = r.key();
      byte[] value = r.value();
      String keyText = key == null ? null : utf8(decoder, key);
      String valueText = value == null ? null : utf8(decoder, value);
      boolean valid = (key == null || keyText != null) && (value == null || valueText != null);
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
      }
      records.add(new PolledRecord(r.partition(), r.offset(), key, value, keyText, valueText));
    }
    latest = records;
    return new PolledBatch(partitions, offsets, flags, keys, values);
  }

  /** The text of {@code bytes}, or {@code null} when they are not strictly UTF-8. */
  private static String utf8(CharsetDecoder decoder, byte[] bytes) {
    // The JDK's decoder (vectorised for ASCII) replaces what is not UTF-8 with U+FFFD; only a
    // text holding U+FFFD, rare and possibly genuine, is decoded again strictly.
    String text = new String(bytes, StandardCharsets.UTF_8);
    if (text.indexOf('\uFFFD') < 0) {
      return text;
    }
    try {
      return decoder.reset().decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      return null;
    }
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

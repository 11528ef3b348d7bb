package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Replay hands out the texts of keys and values exactly as written (the consumer decodes them
 * straight from the fetched bytes), on a real broker: characters outside ASCII and a genuine
 * U+FFFD arrive intact, a tombstone's value is {@code null}, and a value that is not UTF-8 stops
 * the replay with {@code replay-record-invalid} naming the record.
 */
class ReplayTextTest {
  private static final String TEXT = "ü ✓ 𝄞";
  private static final String GENUINE_REPLACEMENT = "a \uFFFD that was written as one";

  @Test
  void textsArriveAsWrittenAndATombstoneHasNoValue() throws Exception {
    String topic = Broker.unique("java-replay-text");
    Broker.createTopic(topic, 1);
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      String start = cleanup.snapshotMarker(topic);
      write(
          topic,
          List.of(
              record("k-" + TEXT, utf8(TEXT)),
              record("k-replacement", utf8(GENUINE_REPLACEMENT)),
              record("k-tombstone", null)));
      List<ReplayBatch.Record> records = replay(cleanup, topic, start);
      assertEquals(
          List.of(
              new ReplayBatch.Record(0, 0, "k-" + TEXT, TEXT),
              new ReplayBatch.Record(0, 1, "k-replacement", GENUINE_REPLACEMENT),
              new ReplayBatch.Record(0, 2, "k-tombstone", null)),
          records);
    }
  }

  @Test
  void aValueThatIsNotUtf8StopsTheReplayNamingTheRecord() throws Exception {
    String topic = Broker.unique("java-replay-bytes");
    Broker.createTopic(topic, 1);
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      String start = cleanup.snapshotMarker(topic);
      // 0xC3 0x28: a two-byte sequence whose second byte is not a continuation byte.
      write(
          topic,
          List.of(
              record("k-valid", utf8("fine")),
              record("k-broken", new byte[] {(byte) 0xC3, 0x28})));
      CleanupException refused =
          assertThrows(CleanupException.class, () -> replay(cleanup, topic, start));
      assertEquals("replay-record-invalid", refused.kind(), refused.getMessage());
      assertTrue(
          refused.getMessage().contains(topic + "-0 at offset 1")
              && refused.getMessage().contains("not valid UTF-8"),
          refused.getMessage());
    }
  }

  private static List<ReplayBatch.Record> replay(Cleanup cleanup, String topic, String start)
      throws CleanupException {
    List<ReplayBatch.Record> records = new ArrayList<>();
    try (RecoverySession session =
        cleanup.startRecovery(topic, new RecoveryPolicy(Optional.of(topic), Optional.empty(), false))) {
      session.restore(List.of(start), ReplayOptions.defaults());
      ReplayBatch batch;
      do {
        batch = session.nextBatch(100);
        records.addAll(batch.records());
      } while (!batch.done());
    }
    return records;
  }

  private static byte[][] record(String key, byte[] value) {
    return new byte[][] {utf8(key), value};
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Writes key and value bytes as given (a null value is a tombstone) to partition 0. */
  private static void write(String topic, List<byte[][]> records) throws Exception {
    Map<String, Object> config = Broker.client();
    config.put("acks", "all");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (byte[][] r : records) {
        producer.send(new ProducerRecord<>(topic, 0, r[0], r[1])).get();
      }
    }
  }
}

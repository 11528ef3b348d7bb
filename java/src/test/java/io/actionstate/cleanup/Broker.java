package io.actionstate.cleanup;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The real broker the project's script started ({@code scripts/kafka start}; {@code scripts/test}
 * exports {@code ASC_KAFKA_BOOTSTRAP}). A missing variable fails the run; nothing is skipped.
 * Set-up here (creating topics, writing records) goes straight through kafka-clients: it is the
 * test's world, not the code under test.
 */
final class Broker {
  private Broker() {}

  static String bootstrap() {
    String bootstrap = System.getenv("ASC_KAFKA_BOOTSTRAP");
    if (bootstrap == null || bootstrap.isBlank()) {
      throw new IllegalStateException(
          "ASC_KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka start and export its"
              + " address, as scripts/test does");
    }
    return bootstrap;
  }

  static Map<String, Object> client() {
    Map<String, Object> client = new HashMap<>();
    client.put("bootstrap.servers", bootstrap());
    return client;
  }

  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Creates a topic (cleanup.policy=compact,delete, no retention) and waits until it is listed. */
  static void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(client())) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(topic, partitions, (short) 1)
                      .configs(
                          Map.of(
                              "cleanup.policy", "compact,delete",
                              "retention.ms", "-1",
                              "retention.bytes", "-1"))))
          .all()
          .get();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!admin.listTopics().names().get().contains(topic)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(topic + " was not listed within 30 s");
        }
        Thread.sleep(50);
      }
    }
  }

  /** Writes keys {@code action-<partition>-<n>} for n in [from, to), acknowledged by all. */
  static void writeActions(String topic, int partition, int from, int to) throws Exception {
    Map<String, Object> config = client();
    config.put("acks", "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      for (int n = from; n < to; n++) {
        producer.send(
            new ProducerRecord<>(
                topic,
                partition,
                "action-" + partition + "-" + n,
                "{\"action\":" + n + ",\"done\":true}"));
      }
      producer.flush();
    }
  }
}

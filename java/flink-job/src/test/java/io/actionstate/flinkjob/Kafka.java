package io.actionstate.flinkjob;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The real broker the project's script started ({@code scripts/kafka start}; {@code scripts/test}
 * exports {@code ASC_KAFKA_BOOTSTRAP}). A missing variable fails the run; nothing is skipped.
 * Everything here goes straight through kafka-clients: it is the test's own view of Kafka,
 * independent of the job and of the component.
 */
final class Kafka {
  private Kafka() {}

  static String bootstrap() {
    String bootstrap = System.getenv("ASC_KAFKA_BOOTSTRAP");
    if (bootstrap == null || bootstrap.isBlank()) {
      throw new IllegalStateException(
          "ASC_KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka start and export its"
              + " address, as scripts/test does");
    }
    return bootstrap;
  }

  static Map<String, String> client() {
    return Map.of("bootstrap.servers", bootstrap());
  }

  static Map<String, Object> clientObjects() {
    return new HashMap<>(client());
  }

  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** An action-state topic: cleanup.policy=compact,delete, no retention (SPEC §5). */
  static void createActionStateTopic(String topic, int partitions) throws Exception {
    create(
        new NewTopic(topic, partitions, (short) 1)
            .configs(
                Map.of(
                    "cleanup.policy", "compact,delete",
                    "retention.ms", "-1",
                    "retention.bytes", "-1")));
  }

  static void createTopic(String topic, int partitions) throws Exception {
    create(new NewTopic(topic, partitions, (short) 1));
  }

  private static void create(NewTopic topic) throws Exception {
    try (Admin admin = Admin.create(clientObjects())) {
      admin.createTopics(List.of(topic)).all().get();
      Waits.until(
          topic.name() + " listed",
          Duration.ofSeconds(30),
          () -> admin.listTopics().names().get().contains(topic.name()));
    }
  }

  /** Kafka's topic ID in its 22-character URL-safe base64 form. */
  static String topicId(String topic) throws Exception {
    try (Admin admin = Admin.create(clientObjects())) {
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      return d.topicId().toString();
    }
  }

  /** Each partition's last stable offset (read_committed end), by partition. */
  static Map<Integer, Long> committedEnds(String topic) throws Exception {
    return offsets(topic, OffsetSpec.latest());
  }

  /** Each partition's high watermark (read_uncommitted end), by partition. */
  static Map<Integer, Long> highWatermarks(String topic) throws Exception {
    return offsets(topic, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
  }

  /** Each partition's beginning offset, by partition. */
  static Map<Integer, Long> beginnings(String topic) throws Exception {
    return offsets(topic, OffsetSpec.earliest());
  }

  private static Map<Integer, Long> offsets(String topic, OffsetSpec spec) throws Exception {
    return offsets(topic, spec, IsolationLevel.READ_COMMITTED);
  }

  private static Map<Integer, Long> offsets(String topic, OffsetSpec spec, IsolationLevel level)
      throws Exception {
    try (Admin admin = Admin.create(clientObjects())) {
      int partitions =
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
      Map<TopicPartition, OffsetSpec> request = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        request.put(new TopicPartition(topic, p), spec);
      }
      Map<Integer, Long> result = new TreeMap<>();
      admin
          .listOffsets(request, new ListOffsetsOptions(level))
          .all()
          .get()
          .forEach((tp, info) -> result.put(tp.partition(), info.offset()));
      return result;
    }
  }

  /**
   * Every committed record of {@code topic} from each partition's beginning to its last stable
   * offset, with a plain read_committed consumer (no group, explicit assignment).
   */
  static List<ConsumerRecord<String, String>> readCommitted(String topic) throws Exception {
    Map<Integer, Long> ends = committedEnds(topic);
    Map<String, Object> config = clientObjects();
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      ends.keySet().forEach(p -> partitions.add(new TopicPartition(topic, p)));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp.partition()))) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("could not read " + topic + " up to " + ends + " within 60 s");
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.offset() < ends.get(r.partition())) {
            records.add(r);
          }
        }
      }
    }
    return records;
  }
}

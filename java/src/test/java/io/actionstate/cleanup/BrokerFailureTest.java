package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The client duties the WIT states, proven on the JVM the way {@code tests/broker_failure.rs}
 * proves them for the Rust host: on a private three-node cluster, the leader of the data topic's
 * partition 0 is SIGKILLed right before the apply writes COMMITTED. Each request is bounded by a
 * third of the step's timeout and every leader lookup is fresh, so the component's retries reach
 * the leader the cluster elects: the apply completes (or fails with a Kafka error that says the
 * plan is COMMITTED, and a second apply completes), and no record at or above the boundary is
 * deleted.
 */
class BrokerFailureTest {
  private static final int PARTITIONS = 2;

  @Test
  void anApplyWhosePartitionLeaderDiesBeforeTheCommitCompletesAndKeepsEveryRecordAtTheBoundary()
      throws Exception {
    Cluster cluster = Cluster.start();
    try {
      String topic = Broker.unique("java-failure");
      String control = topic + "-cleanup-control";
      try (Admin admin = Admin.create(cluster.client())) {
        admin
            .createTopics(
                List.of(
                    new NewTopic(topic, PARTITIONS, (short) 3)
                        .configs(
                            Map.of(
                                "cleanup.policy", "compact,delete",
                                "retention.ms", "-1",
                                "retention.bytes", "-1",
                                "min.insync.replicas", "2"))))
            .all()
            .get();
      }
      write(cluster, topic, 0, 100);
      Plans plans = Components.plans();
      try (Cleanup cleanup = Cleanup.connect(cluster.client(), Duration.ofSeconds(30))) {
        String marker = cleanup.snapshotMarker(topic);
        write(cluster, topic, 100, 150);
        Plan plan = plans.fromMarkers("C1", List.of(marker));
        String planJson = plans.render(plan);
        AtomicInteger killed = new AtomicInteger();
        ApplyOptions options = ApplyOptions.of(control).withReplicationFactor(3);
        ApplyReport report;
        try {
          report =
              cleanup.apply(
                  planJson,
                  options,
                  new OperatorEvents() {
                    @Override
                    public Review beforeCommit(
                        String planId,
                        List<ApplyReport.PartitionPreview> preview,
                        Optional<ApplyReport.NewControlTopic> created) {
                      try {
                        int leader = leader(cluster, topic);
                        cluster.killNode(leader);
                        killed.set(leader);
                      } catch (Exception e) {
                        throw new IllegalStateException("could not kill the leader", e);
                      }
                      return Review.PROCEED;
                    }
                  });
        } catch (ApplyException failed) {
          // Safe only as a Kafka failure that tells the truth about the plan's status.
          assertEquals("kafka", failed.kind(), failed.getMessage());
          assertEquals(Optional.of(Status.COMMITTED), failed.status(), failed.getMessage());
          assertEquals(FailureClass.FAILED, failed.failureClass());
          assertTrue(failed.plan().isPresent(), "the failure carries the plan");
          System.out.println("BrokerFailureTest: the interrupted apply failed safely (" + failed.getMessage()
              + "); applying again");
          report = cleanup.apply(planJson, options);
        }
        assertTrue(killed.get() > 0, "the review ran and killed the leader");
        System.out.println("BrokerFailureTest: killed node " + killed.get() + "; apply " + report.outcome());
        assertTrue(
            report.outcome() == ApplyReport.Outcome.APPLIED
                || report.outcome() == ApplyReport.Outcome.RESUMED,
            report.toString());
        assertEquals(
            List.of(new PartitionOffset(0, 100), new PartitionOffset(1, 100)),
            report.beginningsAfter());
      }
      // Read independently: every partition begins exactly at 100 and [100, 150) is intact.
      Map<Integer, List<String>> keys = readAll(cluster, topic);
      for (int p = 0; p < PARTITIONS; p++) {
        List<String> expected = new ArrayList<>();
        for (int n = 100; n < 150; n++) {
          expected.add("key-" + p + "-" + n);
        }
        assertEquals(expected, keys.get(p), "partition " + p);
      }
    } finally {
      cluster.stop();
    }
  }

  private static int leader(Cluster cluster, String topic) throws Exception {
    try (Admin admin = Admin.create(cluster.client())) {
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      return d.partitions().get(0).leader().id();
    }
  }

  private static void write(Cluster cluster, String topic, int from, int to) throws Exception {
    Map<String, Object> config = cluster.client();
    config.put("acks", "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      for (int p = 0; p < PARTITIONS; p++) {
        for (int n = from; n < to; n++) {
          producer.send(new ProducerRecord<>(topic, p, "key-" + p + "-" + n, "value-" + n)).get();
        }
      }
    }
  }

  private static Map<Integer, List<String>> readAll(Cluster cluster, String topic) {
    Map<String, Object> config = cluster.client();
    config.put("isolation.level", "read_committed");
    config.put("enable.auto.commit", false);
    Map<Integer, List<String>> keys = new HashMap<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        partitions.add(new TopicPartition(topic, p));
        keys.put(p, new ArrayList<>());
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("could not read " + topic + " within 60 s");
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          keys.get(r.partition()).add(r.key());
        }
      }
    }
    return keys;
  }
}

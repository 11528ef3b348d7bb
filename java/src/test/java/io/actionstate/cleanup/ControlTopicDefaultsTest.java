package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.capability.KafkaFailure;
import io.actionstate.cleanup.kafka.KafkaCapabilities;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;

/**
 * The control topic's production defaults through the Java host on the test broker: the Java
 * host's {@code describe-cluster} and replica counts (the conformance suite checks them too), a
 * new control topic with the single broker's production default (one replica,
 * {@code min.insync.replicas} 1), and {@link ApplyReport#warnings()} for a control topic with
 * fewer replicas than the production default.
 */
class ControlTopicDefaultsTest {
  /**
   * The test broker as three brokers that default to three replicas: only the answer of
   * {@code describe-cluster} is changed (the Java tests run one broker).
   */
  private static Capabilities threeBrokers(Capabilities honest) {
    return new Capabilities(
        honest.clock(),
        new ConformanceTest.LyingAdmin(honest.admin()) {
          @Override
          public Capabilities.ClusterDescription describeCluster(List<String> names)
              throws KafkaFailure {
            List<Capabilities.ConfigEntry> configs = new ArrayList<>();
            for (Capabilities.ConfigEntry e : super.describeCluster(names).configs()) {
              configs.add(
                  e.name().equals("default.replication.factor")
                      ? new Capabilities.ConfigEntry(e.name(), Optional.of("3"))
                      : e);
            }
            return new Capabilities.ClusterDescription(List.of(1, 2, 3), configs);
          }
        },
        honest.writers(),
        honest.consumers());
  }

  @Test
  void theJavaHostDescribesTheClusterAndEachTopicsReplicaCount() throws Exception {
    String topic = Broker.unique("java-replicas");
    Broker.createTopic(topic, 2);
    Capabilities caps = KafkaCapabilities.connect(Broker.client(), Duration.ofSeconds(30));
    try {
      Capabilities.ClusterDescription cluster =
          caps.admin().describeCluster(List.of("default.replication.factor", "no.such.config"));
      // The test broker is node 1 and defaults to one replica (scripts/kafka).
      assertEquals(List.of(1), cluster.brokers());
      assertEquals(
          List.of(
              new Capabilities.ConfigEntry("default.replication.factor", Optional.of("1")),
              new Capabilities.ConfigEntry("no.such.config", Optional.empty())),
          cluster.configs());
      assertEquals(List.of(), caps.admin().describeCluster(List.of()).configs());
      Capabilities.TopicMetadata described =
          caps.admin().describe(List.of(topic), List.of(), false).get(0).orElseThrow();
      assertEquals(1, described.replicationFactor());
    } finally {
      caps.admin().close();
    }
  }

  @Test
  void aNewControlTopicGetsTheProductionDefaultAndAnUnderReplicatedOneAWarning()
      throws Exception {
    String topic = Broker.unique("java-defaults");
    Broker.createTopic(topic, 1);
    Broker.writeActions(topic, 0, 0, 20);
    Plans plans = Components.plans();
    String planJson;
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      planJson = plans.render(plans.fromMarkers("C1", List.of(cleanup.snapshotMarker(topic))));
      // One broker: one replica, and nothing to warn about.
      ApplyOptions dry = new ApplyOptions(topic + "-cleanup", java.util.OptionalInt.empty(), true, false);
      ApplyReport report = cleanup.apply(planJson, dry);
      assertEquals(
          Optional.of(new ApplyReport.NewControlTopic(topic + "-cleanup", 1, 1, 1)),
          report.createdControlTopic());
      assertEquals(List.of(), report.warnings());
      // An explicit factor wins, and the component checks it.
      CleanupException refused =
          assertThrows(
              CleanupException.class,
              () -> cleanup.apply(planJson, ApplyOptions.of(topic + "-c").withReplicationFactor(0)));
      assertTrue(
          refused.getMessage().contains("replication factor must be between 1 and 32767, but was 0"),
          refused.getMessage());
    }

    // A control topic with one replica on "three brokers defaulting to three": the apply goes
    // on, and the report names it with the reassignment that adds the replicas.
    String control = Broker.unique("java-control");
    try (Admin admin = Admin.create(Broker.client())) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(control, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
          .all()
          .get();
    }
    Capabilities honest = KafkaCapabilities.connect(Broker.client(), Duration.ofSeconds(30));
    try (Cleanup cleanup = Cleanup.withCapabilities(threeBrokers(honest))) {
      ApplyReport report = cleanup.apply(planJson, ApplyOptions.of(control));
      assertEquals(ApplyReport.Outcome.APPLIED, report.outcome());
      assertEquals(1, report.warnings().size(), report.warnings().toString());
      ApplyReport.Warning warning = report.warnings().get(0);
      assertEquals("under-replicated-control-topic", warning.kind());
      assertEquals(
          Optional.of(
              new ApplyReport.ControlTopicReplication(
                  control,
                  1,
                  3,
                  2,
                  3,
                  3,
                  "{\"version\":1,\"partitions\":[{\"topic\":\"" + control
                      + "\",\"partition\":0,\"replicas\":[1,2,3]}]}")),
          warning.replication());
      assertTrue(
          warning.message().contains("control topic " + control + " has 1 replica but a control"
              + " topic needs 3 on this cluster (3 brokers")
              && warning.message().contains("kafka-reassign-partitions.sh"),
          warning.message());
    } finally {
      honest.admin().close();
    }
  }
}

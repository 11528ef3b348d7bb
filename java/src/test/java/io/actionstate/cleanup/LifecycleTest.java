package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.capability.KafkaFailure;
import io.actionstate.cleanup.internal.GuestFault;
import io.actionstate.cleanup.kafka.KafkaCapabilities;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The documented lifecycle on a real broker: a broken host invariant traps, the trap discards the
 * instance and the sessions it held, the next call runs in a fresh instance, and a closed
 * {@code Cleanup} refuses calls. A Kafka failure, by contrast, is a typed error, never a trap.
 */
class LifecycleTest {
  @Test
  void aTrapDiscardsTheInstanceAndItsSessionsAndTheNextCallRunsInAFreshOne() throws Exception {
    String topic = Broker.unique("java-lifecycle");
    Broker.createTopic(topic, 1);
    Capabilities honest = KafkaCapabilities.connect(Broker.client(), Duration.ofSeconds(30));
    AtomicBoolean broken = new AtomicBoolean();
    Capabilities caps =
        new Capabilities(
            honest.clock(),
            new ConformanceTest.LyingAdmin(honest.admin()) {
              @Override
              public List<Optional<Capabilities.TopicMetadata>> describe(
                  List<String> topics, List<String> names, boolean withOffsets)
                  throws KafkaFailure {
                if (broken.getAndSet(false)) {
                  throw new IllegalStateException("a host invariant broke (test)");
                }
                return super.describe(topics, names, withOffsets);
              }
            },
            honest.writers(),
            honest.consumers());
    Cleanup cleanup = Cleanup.withCapabilities(caps);
    try {
      RecoverySession session =
          cleanup.startRecovery(topic, new RecoveryPolicy(Optional.of(topic), Optional.empty(), false));
      String before = session.snapshotMarker();
      broken.set(true);
      GuestFault fault = assertThrows(GuestFault.class, () -> cleanup.snapshotMarker(topic));
      assertTrue(fault.getMessage().contains("snapshot-marker"), fault.getMessage());
      IllegalStateException lost = assertThrows(IllegalStateException.class, session::snapshotMarker);
      assertTrue(lost.getMessage().contains("start a new one"), lost.getMessage());
      assertEquals(before, cleanup.snapshotMarker(topic), "the next call runs in a fresh instance");
      try (RecoverySession fresh =
          cleanup.startRecovery(topic, new RecoveryPolicy(Optional.of(topic), Optional.empty(), false))) {
        assertEquals(before, fresh.snapshotMarker());
      }
      cleanup.close();
      assertThrows(IllegalStateException.class, () -> cleanup.snapshotMarker(topic));
    } finally {
      cleanup.close();
      honest.admin().close();
    }
  }

  @Test
  void aMissingTopicIsATypedRefusalNotATrap() throws Exception {
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      CleanupException refused =
          assertThrows(
              CleanupException.class,
              () -> cleanup.snapshotMarker(Broker.unique("java-no-such-topic")));
      assertEquals("invalid-argument", refused.kind(), refused.getMessage());
      ApplyException notAPlan =
          assertThrows(ApplyException.class, () -> cleanup.apply("{}", ApplyOptions.of("c")));
      assertEquals("invalid-plan", notAPlan.kind());
      assertEquals(Optional.empty(), notAPlan.status());
      assertEquals(FailureClass.REFUSED, notAPlan.failureClass());
      assertEquals(Optional.empty(), notAPlan.plan(), "a rejected document is no plan");
    }
  }
}

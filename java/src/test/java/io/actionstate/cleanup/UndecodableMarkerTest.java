package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A restore whose marker text has no UTF-8 form (a Java string with a lone surrogate, which the
 * WIT's {@code string} cannot carry) fails like any other failed restore, through the component's
 * failed-restore rule (WIT {@code recovery-session.restore}): the runtime may already hold the
 * failed checkpoint's state, so the session must not go on answering checkpoints as before. With
 * the real component on a real broker.
 */
class UndecodableMarkerTest {
  private static final int RECORDS = 5;

  private static RecoveryPolicy standard(String topic) {
    return new RecoveryPolicy(Optional.of(topic), Optional.empty(), false);
  }

  /** How a session answers after any failed restore with no unfinished replay to keep. */
  private static void assertBehavesAsAfterAFailedRestore(RecoverySession session) {
    CleanupException checkpoint = assertThrows(CleanupException.class, session::snapshotMarker);
    assertEquals("recovery-refused", checkpoint.kind(), checkpoint.getMessage());
    CleanupException replay = assertThrows(CleanupException.class, () -> session.nextBatch(10));
    assertEquals("invalid-argument", replay.kind(), replay.getMessage());
    assertTrue(replay.getMessage().contains("restore again"), replay.getMessage());
  }

  @Test
  void aLiveSessionRefusesCheckpointsAfterARestoreOfUndecodableMarkerText() throws Exception {
    String topic = Broker.unique("java-undecodable-live");
    Broker.createTopic(topic, 1);
    Broker.writeActions(topic, 0, 0, RECORDS);
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30));
        RecoverySession session = cleanup.startRecovery(topic, standard(topic))) {
      String end = session.snapshotMarker();
      session.restore(List.of(end), ReplayOptions.defaults());
      assertTrue(session.nextBatch(10).done(), "nothing to replay: the session is live");

      String corrupted = end.replace(topic, topic + "\uD800");
      CleanupException refused =
          assertThrows(
              CleanupException.class,
              () -> session.restore(List.of(corrupted), ReplayOptions.defaults()));

      assertBehavesAsAfterAFailedRestore(session);
      assertEquals("invalid-marker", refused.kind(), refused.getMessage());
      assertTrue(refused.getMessage().contains("lone surrogate"), refused.getMessage());
      assertTrue(refused.getMessage().contains("'topic'"), refused.getMessage());
    }
  }

  /**
   * The same offsets, as a checkpoint whose marker text got corrupted: not a retry of the
   * unfinished replay, since the text does not even decode. {@code corrupt} turns the marker
   * text into one with a lone surrogate.
   */
  private static void assertAReplayingSessionDropsItsReplay(
      String name, java.util.function.BinaryOperator<String> corrupt) throws Exception {
    String topic = Broker.unique(name);
    Broker.createTopic(topic, 1);
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30));
        RecoverySession session = cleanup.startRecovery(topic, standard(topic))) {
      String start = session.snapshotMarker();
      Broker.writeActions(topic, 0, 0, RECORDS);
      session.restore(List.of(start), ReplayOptions.defaults());
      assertEquals(start, session.snapshotMarker(), "during the replay: the restored offsets");
      String corrupted = corrupt.apply(start, topic);

      CleanupException refused =
          assertThrows(
              CleanupException.class,
              () -> session.restore(List.of(corrupted), ReplayOptions.defaults()));

      assertBehavesAsAfterAFailedRestore(session);
      assertEquals("invalid-marker", refused.kind(), refused.getMessage());
    }
  }

  @Test
  void aReplayingSessionDropsItsReplayAfterARestoreOfUndecodableMarkerText() throws Exception {
    assertAReplayingSessionDropsItsReplay(
        "java-undecodable-replay", (marker, topic) -> marker.replace(topic, topic + "\uDC00"));
  }

  @Test
  void aLoneSurrogateBeforeTheTextOfAnEscapedLowSurrogateStillFailsTheRestore() throws Exception {
    // Were the lone high surrogate only written as its JSON escape, the text after it would
    // complete a valid pair (U+10000) and the marker would parse with the replay's offsets.
    assertAReplayingSessionDropsItsReplay(
        "java-undecodable-pair",
        (marker, topic) -> marker.replace(topic, topic + '\uD800' + "\\" + "uDC00"));
  }

  @Test
  void aLoneSurrogateOutsideEveryJsonStringFailsTheRestore() throws Exception {
    assertAReplayingSessionDropsItsReplay(
        "java-undecodable-bare", (marker, topic) -> marker + "\uD800");
  }

  @Test
  void replayOptionsTheWitCannotCarryAreRefusedWhenMadeNotAtRestore() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new ReplayOptions(Duration.ofMillis(-1), Duration.ofSeconds(60)));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ReplayOptions(Duration.ofMillis(500), Duration.ofMillis(1L << 32)));
    assertThrows(
        NullPointerException.class, () -> new ReplayOptions(null, Duration.ofSeconds(60)));
  }
}

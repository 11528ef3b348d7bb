package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input gets the typed error with the component's sentence, never a crash or a trap; the
 * instance keeps working afterwards.
 */
class BadInputTest {
  private final Plans plans = Components.plans();

  @AfterEach
  void theInstanceStillVerifiesTheSpecPlan() throws CleanupException {
    assertEquals(SpecVectorsTest.SPEC_ID, plans.verify(SpecVectorsTest.SPEC_PLAN).planId());
  }

  private CleanupException refused(String planJson) {
    return assertThrows(CleanupException.class, () -> plans.verify(planJson));
  }

  /** The exception's text is the component's own sentence for the typed error it carries. */
  private void assertSentenceIsTheComponents(CleanupException e) {
    assertEquals(plans.message(e.error()), e.getMessage());
    assertTrue(!e.getMessage().isBlank() && !e.getMessage().contains("\n"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "{",
        "hello",
        "null",
        "[]",
        "{\"schemaVersion\" : 1}",
        "{\"schemaVersion\":\"1\",\"planId\":\"x\",\"sourceRecoveryPoint\":\"c\",\"topic\":\"t\","
            + "\"topicId\":\"i\",\"offsets\":{\"0\":1}}",
        "{\"schemaVersion\":1,\"planId\":\"x\",\"sourceRecoveryPoint\":\"c\",\"topic\":\"t\","
            + "\"topicId\":\"i\",\"offsets\":[1,2]}",
        "{\"schemaVersion\":1,\"planId\":\"x\",\"sourceRecoveryPoint\":\"c\",\"topic\":\"t\","
            + "\"topicId\":\"i\",\"offsets\":{\"0\":10.5}}",
        "{\"schemaVersion\":1,\"planId\":\"x\",\"sourceRecoveryPoint\":\"c\",\"topic\":\"t\","
            + "\"topicId\":\"i\",\"offsets\":{\"0\":-1}}",
        "{\"schemaVersion\":1,\"planId\":\"x\",\"sourceRecoveryPoint\":\"c\",\"topic\":\"t\","
            + "\"topicId\":\"i\",\"offsets\":{\"0\":1}}",
        "{\"a\":1,\"a\":2}",
        "{} trailing",
        "\"\\ud800\"",
      })
  void malformedOrMistypedPlansAreInvalidPlan(String planJson) {
    CleanupException e = refused(planJson);
    assertInstanceOf(CleanupError.InvalidPlan.class, e.error());
    assertEquals("invalid-plan", e.kind());
    assertEquals(((CleanupError.InvalidPlan) e.error()).detail(), e.getMessage());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void aMismatchedPlanIdIsRefusedNamingBothIds() {
    String tampered = SpecVectorsTest.SPEC_PLAN.replace("\"1\" : 20", "\"1\" : 21");
    CleanupException e = refused(tampered);
    assertEquals("invalid-plan", e.kind());
    assertTrue(e.getMessage().contains(SpecVectorsTest.SPEC_ID), e.getMessage());
  }

  @Test
  void aDocumentLargerThan64MiBIsRefusedWithItsSize() {
    int size = (64 << 20) + 1;
    String huge = " ".repeat(size - 2) + "{}";
    CleanupException e = refused(huge);
    assertEquals("invalid-plan", e.kind());
    assertTrue(
        e.getMessage().contains(size + " bytes, more than the " + (64 << 20) + " bytes accepted"),
        e.getMessage());
  }

  @Test
  void aDocumentOfMillionsOfValuesIsRefusedNotExhaustingTheGuest() {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < (1 << 21); i++) {
      json.append(i == 0 ? "0" : ",0");
    }
    json.append(']');
    CleanupException e = refused(json.toString());
    assertEquals("invalid-plan", e.kind());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void deepNestingIsRefused() {
    String deep = "[".repeat(100_000) + "]".repeat(100_000);
    CleanupException e = refused(deep);
    assertEquals("invalid-plan", e.kind());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void aJavaStringWithALoneSurrogateIsAnInvalidArgumentNotACrash() {
    CleanupException e = refused("{\"topic\":\"a\uD800b\"}");
    assertInstanceOf(CleanupError.InvalidArgument.class, e.error());
    assertTrue(e.getMessage().contains("lone UTF-16 surrogate at index 11"), e.getMessage());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void noMarkersIsInvalidMarker() {
    CleanupException e =
        assertThrows(CleanupException.class, () -> plans.fromMarkers("checkpoint-1", List.of()));
    assertEquals("invalid-marker", e.kind());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void aLegacyMarkerCannotAuthorizeDeletion() {
    CleanupException e =
        assertThrows(
            CleanupException.class,
            () -> plans.fromMarkers("checkpoint-1", List.of("{\"0\":100}")));
    assertEquals("invalid-marker", e.kind());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void aBlankRecoveryPointIsInvalidPlan() {
    CleanupException e =
        assertThrows(
            CleanupException.class,
            () ->
                plans.fromMarkers(
                    " ",
                    List.of(
                        "{\"schemaVersion\":1,\"topic\":\"t\",\"topicId\":\"i\",\"offsets\":{\"0\":1}}")));
    assertEquals("invalid-plan", e.kind());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void aTombstoneInTheControlLogIsCorruptionNamingItsOffset() {
    CleanupException e =
        assertThrows(
            CleanupException.class,
            () -> plans.replayControlLog(List.of(new ControlEntry(7, "k", null))));
    assertInstanceOf(CleanupError.ControlTopicCorrupt.class, e.error());
    assertTrue(e.getMessage().contains("7"), e.getMessage());
    assertSentenceIsTheComponents(e);
  }

  @Test
  void sealRefusesAnEmptyOffsetMapAndControlCharacters() {
    CleanupException empty =
        assertThrows(CleanupException.class, () -> plans.seal("c", "t", "i", List.of()));
    assertEquals("invalid-plan", empty.kind());
    CleanupException control =
        assertThrows(
            CleanupException.class,
            () -> plans.seal("c\n1", "t", "i", List.of(new PartitionOffset(0, 1))));
    assertEquals("invalid-plan", control.kind());
    assertSentenceIsTheComponents(control);
  }

  @Test
  void effectiveBoundaryRefusesAPlanThatListsAPartitionTwice() throws CleanupException {
    Plan good = plans.verify(SpecVectorsTest.SPEC_PLAN);
    Plan doubled =
        new Plan(
            good.schemaVersion(),
            good.planId(),
            good.sourceRecoveryPoint(),
            good.topic(),
            good.topicId(),
            List.of(new PartitionOffset(7, 10), new PartitionOffset(7, 20)));
    CleanupException e =
        assertThrows(CleanupException.class, () -> plans.effectiveBoundary(List.of(good, doubled)));
    CleanupError.InvalidPlan error = assertInstanceOf(CleanupError.InvalidPlan.class, e.error());
    assertEquals(
        "Cleanup plan at position 2 contains duplicate Kafka partition 7 (offsets 10 and 20)",
        error.detail());
    assertSentenceIsTheComponents(e);
  }
}

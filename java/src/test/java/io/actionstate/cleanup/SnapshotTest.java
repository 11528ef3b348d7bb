package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Planning straight from real Flink checkpoints and savepoints on the JVM ({@code
 * fixtures/snapshots}, written by real Flink 2.2 and 1.20 jobs; expected plans by Flink's State
 * Processor API): the Java tool's plan byte for byte, or its refusal, without running Flink.
 */
class SnapshotTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Plans PLANS = Plans.load();

  /** The repository root: fixture paths in expected.json are relative to it. */
  private static Path repo() {
    return Components.fixtures().toAbsolutePath().normalize().getParent();
  }

  private static List<Path> cases() throws IOException {
    List<Path> cases = new ArrayList<>();
    try (Stream<Path> files = Files.walk(Components.fixtures().resolve("snapshots"), 3)) {
      files.filter(p -> p.getFileName().toString().equals("expected.json")).forEach(cases::add);
    }
    cases.sort(null);
    return cases;
  }

  @TestFactory
  Stream<DynamicTest> everySnapshotPlansToTheJavaToolsPlanOrRefusal() throws IOException {
    List<Path> cases = cases();
    assertTrue(cases.size() >= 18, "both Flink lines, nine cases each: " + cases);
    return cases.stream()
        .map(
            expectedFile ->
                DynamicTest.dynamicTest(
                    repo().relativize(expectedFile.getParent()).toString(),
                    () -> {
                      JsonNode expected = JSON.readTree(expectedFile.toFile());
                      Path absolute = repo().resolve(expected.get("checkpoint").asText());
                      String uid = text(expected, "operatorUid");
                      String hash = uid == null ? text(expected, "operatorUidHash") : null;
                      if (expected.has("plan")) {
                        // Named by its absolute path here: the same plan but for its source.
                        Plan plan = PLANS.fromSnapshot(absolute, uid, hash);
                        JsonNode want = JSON.readTree(expected.get("plan").asText());
                        JsonNode got = JSON.readTree(PLANS.render(plan));
                        assertEquals(want.get("offsets"), got.get("offsets"));
                        assertEquals(want.get("topic"), got.get("topic"));
                        assertEquals(want.get("topicId"), got.get("topicId"));
                        assertEquals(absolute.toString(), plan.sourceRecoveryPoint());
                      } else {
                        CleanupException e =
                            assertThrows(
                                CleanupException.class,
                                () -> PLANS.fromSnapshot(absolute, uid, hash));
                        assertEquals("invalid-marker", e.error().kind());
                        assertTrue(
                            e.getMessage().contains(expected.get("error").asText()),
                            e.getMessage());
                      }
                    }));
  }

  @Test
  void thePlanTextIsTheJavaToolsForTheSnapshotAsNamed() throws Exception {
    // The Java tool's plan for this snapshot under the name given here: its markers' minimum
    // (from the State Processor API's reading, in expected.json) sealed under that name.
    Path expectedFile =
        Components.fixtures().resolve("snapshots/flink-2.2/savepoint-large-markers/expected.json");
    JsonNode expected = JSON.readTree(expected(expectedFile).get("plan").asText());
    Path given =
        Components.fixtures().resolve("snapshots/flink-2.2/savepoint-large-markers/savepoint");
    List<PartitionOffset> offsets = new ArrayList<>();
    for (var entry : expected.get("offsets").properties()) {
      offsets.add(
          new PartitionOffset(Integer.parseInt(entry.getKey()), entry.getValue().asLong()));
    }
    Plan want =
        PLANS.seal(
            given.toString(),
            expected.get("topic").asText(),
            expected.get("topicId").asText(),
            offsets);
    Plan plan = PLANS.fromSnapshot(given, "agent-operator", null);
    assertEquals(PLANS.render(want), PLANS.render(plan));
    assertEquals(3000, plan.offsets().size());
  }

  private static JsonNode expected(Path file) throws IOException {
    return JSON.readTree(file.toFile());
  }

  @Test
  void aTruncatedMetadataIsAnInvalidSnapshotNamingFileAndOffset(@TempDir Path dir)
      throws IOException {
    byte[] metadata =
        Files.readAllBytes(
            Components.fixtures()
                .resolve("snapshots/flink-1.20/savepoint-canonical/savepoint/_metadata"));
    Files.write(dir.resolve("_metadata"), java.util.Arrays.copyOf(metadata, metadata.length / 3));
    CleanupException e =
        assertThrows(
            CleanupException.class, () -> PLANS.fromSnapshot(dir, "agent-operator", null));
    assertEquals("invalid-snapshot", e.error().kind());
    assertTrue(e.getMessage().contains(dir + "/_metadata is not readable at byte"), e.getMessage());
  }

  @Test
  void anOperatorThatIsNotThereIsNamedWithThoseThatAre() {
    Path given = Components.fixtures().resolve("snapshots/flink-2.2/savepoint-canonical/savepoint");
    CleanupException e =
        assertThrows(CleanupException.class, () -> PLANS.fromSnapshot(given, "nope", null));
    assertEquals("invalid-argument", e.error().kind());
    assertTrue(e.getMessage().contains("(uid \"agent-operator\")"), e.getMessage());
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value == null || value.isNull() ? null : value.asText();
  }
}

package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every golden scenario in {@code fixtures/} through the validator component on the JVM, as
 * {@code host/tests/fixtures.rs} (wasmtime) and {@code web/test/fixtures.mjs} (jco) do: the same
 * inputs, the same expected bytes ({@code expected.json}, {@code plan-id.txt},
 * {@code expected.txt}) or an error whose component-rendered sentence contains
 * {@code error.txt}. Each scenario runs on both Chicory engines.
 */
class FixturesTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What a scenario produced: expected files by name, or the error sentence. */
  private record Outcome(Map<String, String> files, String error) {
    static Outcome files(Map<String, String> files) {
      return new Outcome(files, null);
    }

    static Outcome error(CleanupException e) {
      return new Outcome(null, e.getMessage());
    }
  }

  private static List<String> scenarios() throws IOException {
    try (Stream<Path> entries = Files.list(Components.fixtures())) {
      return entries
          .filter(Files::isDirectory)
          .map(p -> p.getFileName().toString())
          // fixtures/snapshots holds Flink snapshots, not a scenario.
          .filter(name -> !name.equals("snapshots"))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  /** Byte for byte: invalid UTF-8 fails, a BOM is kept (Files.readString does both). */
  private static String read(Path dir, String file) throws IOException {
    return Files.readString(dir.resolve(file));
  }

  @Test
  void theFixturesHaveScenariosOfEveryKind() throws IOException {
    List<String> names = scenarios();
    for (String kind : List.of("plan-", "markers-", "control-")) {
      assertTrue(names.stream().anyMatch(n -> n.startsWith(kind)), "no " + kind + "* scenario");
    }
  }

  /** The component this jar carries, compiled ahead of time (what {@code Plans.load()} runs). */
  @TestFactory
  Stream<DynamicTest> aheadOfTime() throws IOException {
    return tests(null);
  }

  @TestFactory
  Stream<DynamicTest> interpreter() throws IOException {
    return tests(Plans.Engine.INTERPRETER);
  }

  /** {@code engine} {@code null}: the ahead-of-time compiled component. */
  private Stream<DynamicTest> tests(Plans.Engine engine) throws IOException {
    return scenarios().stream()
        .map(
            name ->
                DynamicTest.dynamicTest(
                    "fixture::" + name,
                    () -> {
                      Path dir = Components.fixtures().resolve(name);
                      checkExpected(dir, run(engine == null ? Components.plans() : Components.plans(engine), name, dir));
                    }));
  }

  private static Outcome run(Plans plans, String name, Path dir) throws IOException {
    try {
      if (name.startsWith("plan-")) {
        return planOutcome(plans, plans.verify(read(dir, "plan.json")));
      } else if (name.startsWith("markers-")) {
        String recoveryPoint = read(dir, "recovery-point.txt");
        return planOutcome(plans, plans.fromMarkers(recoveryPoint, markers(dir)));
      } else if (name.startsWith("control-")) {
        List<ControlRecord> records = plans.replayControlLog(controlEntries(dir));
        StringBuilder text = new StringBuilder();
        for (ControlRecord r : records) {
          text.append(r.plan().planId()).append(' ').append(r.status().name()).append('\n');
        }
        List<Plan> planList = records.stream().map(ControlRecord::plan).toList();
        text.append("boundary ").append(javaMap(plans.effectiveBoundary(planList))).append('\n');
        return Outcome.files(Map.of("expected.txt", text.toString()));
      }
    } catch (CleanupException e) {
      return Outcome.error(e);
    }
    throw new AssertionError("unknown scenario kind: " + name);
  }

  private static Outcome planOutcome(Plans plans, Plan plan) {
    return Outcome.files(
        Map.of("expected.json", plans.render(plan), "plan-id.txt", plan.planId() + "\n"));
  }

  /** {@code {0=10, 1=20}}: Java's AbstractMap rendering, as the Java tool prints boundaries. */
  private static String javaMap(List<PartitionOffset> offsets) {
    return offsets.stream()
        .map(po -> po.partition() + "=" + po.offset())
        .collect(Collectors.joining(", ", "{", "}"));
  }

  private static List<String> markers(Path dir) throws IOException {
    JsonNode root = JSON.readTree(read(dir, "markers.json"));
    assertTrue(root.isArray(), "markers.json must be an array of strings");
    List<String> markers = new ArrayList<>();
    for (JsonNode item : root) {
      assertTrue(item.isTextual(), "markers.json elements must be strings");
      markers.add(item.textValue());
    }
    return markers;
  }

  private static List<ControlEntry> controlEntries(Path dir) throws IOException {
    JsonNode root = JSON.readTree(read(dir, "control-log.json"));
    assertTrue(root.isArray(), "control-log.json must be an array");
    List<ControlEntry> entries = new ArrayList<>();
    for (JsonNode item : root) {
      JsonNode offset = item.get("offset");
      assertTrue(
          offset != null && offset.canConvertToExactIntegral() && offset.asLong() >= 0,
          "each entry needs an integer offset");
      entries.add(new ControlEntry(offset.asLong(), text(item.get("key")), text(item.get("value"))));
    }
    return entries;
  }

  private static String text(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    assertTrue(node.isTextual(), "key and value must be strings or null");
    return node.textValue();
  }

  private static void checkExpected(Path dir, Outcome outcome) throws IOException {
    if (Files.exists(dir.resolve("error.txt"))) {
      String wanted = read(dir, "error.txt").replaceAll("\n+$", "");
      if (outcome.error() == null) {
        fail("expected an error containing " + quote(wanted) + ", got success");
      }
      assertTrue(
          outcome.error().contains(wanted),
          "error message does not contain " + quote(wanted) + ":\n " + outcome.error());
      return;
    }
    if (outcome.error() != null) {
      fail("expected success, got error: " + outcome.error());
    }
    for (Map.Entry<String, String> file : outcome.files().entrySet()) {
      assertEquals(read(dir, file.getKey()), file.getValue(), file.getKey() + " differs");
    }
  }

  private static String quote(String text) {
    return '"' + text + '"';
  }
}

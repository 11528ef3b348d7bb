package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.actionstate.cleanup.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unattended cleanup (issue 37) on the real Flink job, with the command line the README's
 * CronJob and systemd unit run: {@code action-state-cleanup apply --json}, every setting from the
 * environment ({@code ASC_RETAINED} naming the job's checkpoint and savepoint directories), no
 * terminal. The job keeps running through it: checkpoint K1 at 100 actions, savepoint S at 150,
 * checkpoint K2 at 200, all retained. The run plans from every point (the test computes the
 * minimum from each point's plan by the JVM snapshot reader), deletes below it, and records the
 * point that bounds it (K1); the second run changes nothing. The metrics file and {@code status}
 * say what each run did and when.
 */
class ScheduledCleanupTest {
  @TempDir static Path dir;
  static FlinkCluster flink;
  static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Flink keeps the two newest checkpoints, as a production job configures it: older ones (an
   * early checkpoint at 0, say) are gone by the time the cleanup runs.
   */
  @BeforeAll
  static void startFlink() throws Exception {
    flink = FlinkCluster.start(dir, Map.of("execution.checkpointing.num-retained", "2"));
  }

  @AfterAll
  static void stopFlink() throws Exception {
    flink.stop();
  }

  @Test
  @Timeout(600)
  void theDocumentedScheduledApplyPlansFromEveryRetainedPointOfARunningJobAndTheSecondRunIsANoOp()
      throws Exception {
    try (Harness h = Harness.create(flink, "scheduled")) {
      JobID job = h.start("scheduled-run", null, h.settings(), Map.of());
      flink.awaitRunning(job);
      h.release(100);
      h.awaitEffects(100);
      h.awaitStateEnds(100);
      Path k1 = flink.checkpoint(job);
      h.release(150);
      h.awaitEffects(150);
      h.awaitStateEnds(150);
      Path s = flink.savepoint(job);
      h.release(200);
      h.awaitEffects(200);
      h.awaitStateEnds(200);
      Path k2 = flink.checkpoint(job);

      // What Flink retained: K1 and K2 (any earlier checkpoint is discarded, asynchronously),
      // and S.
      Waits.until(
          "Flink retaining K1 and K2 only",
          Harness.WAIT,
          () -> h.retainedCheckpoints(job).equals(List.of(k1, k2)));
      // The expected plan, computed here: per partition the minimum over every point's plan.
      Map<Integer, Long> minimum = new TreeMap<>();
      for (Path point : List.of(k1, s, k2)) {
        Harness.offsets(h.plan(point)).forEach((p, o) -> minimum.merge(p, o, Math::min));
      }
      Plan planK1 = h.plan(k1);
      assertEquals(Harness.each(100), Harness.offsets(planK1), "K1's markers");
      assertEquals(Harness.offsets(planK1), minimum, "K1 is the oldest point");

      Path metrics = dir.resolve("asc-scheduled.prom");
      Path checkpoints = dir.resolve("checkpoints");
      Path savepoints = dir.resolve("savepoints");
      Map<String, String> env = new HashMap<>();
      env.put("ASC_BOOTSTRAP_SERVERS", Kafka.bootstrap());
      env.put("ASC_CONTROL_TOPIC", h.control);
      env.put("ASC_RETAINED", checkpoints + "," + savepoints);
      env.put("ASC_OPERATOR_UID", ActionJob.OPERATOR_UID);
      env.put("ASC_YES", "true");
      env.put("ASC_MAX_DELETE_FRACTION", "0.6");
      env.put("ASC_METRICS_FILE", metrics.toString());

      Instant before = Instant.now();
      Cli.Result first = Cli.run(env, "apply", "--json");
      assertEquals(0, first.exit(), first.stdout() + first.stderr());
      assertEquals("", first.stderr(), "--json keeps stderr empty");
      JsonNode report = JSON.readTree(first.stdout());
      assertEquals("applied", report.get("outcome").asText(), report.toString());
      // Two partitions from 0 to 100: 200 records of the 400 the topic holds go.
      assertEquals(200, report.get("recordsDeleted").asLong(), report.toString());
      JsonNode retained = report.get("retained");
      assertEquals(k1.toString(), retained.get("recorded").asText(), retained.toString());
      assertTrue(retained.get("boundsEveryPartition").asBoolean(), retained.toString());
      assertEquals(3, retained.get("points").size(), retained.toString());
      assertEquals(minimum, offsetsOf(report.get("target")), report.toString());
      assertEquals(Harness.each(100), Kafka.beginnings(h.state), "records below K1 are gone");
      assertEquals(0.0, metric(metrics, "last_run_exit_code"));
      assertEquals(200.0, metric(metrics, "last_run_records_deleted"));
      // K2 (200 on each partition) is the newest point: [100, 200) of each is kept only for K1
      // and S, 200 records.
      JsonNode held = report.get("heldBelowNewestPoint");
      assertEquals(k2.toString(), held.get("point").asText(), held.toString());
      assertEquals(200, held.get("records").asLong(), held.toString());
      assertEquals(200.0, metric(metrics, "last_run_records_held_below_newest_point"));
      double firstSuccess = metric(metrics, "last_success_timestamp_seconds");

      // The next night, nothing retained changed: nothing to do, exit 0.
      Cli.Result second = Cli.run(env, "apply", "--json");
      assertEquals(0, second.exit(), second.stdout() + second.stderr());
      JsonNode again = JSON.readTree(second.stdout());
      assertEquals("already-applied", again.get("outcome").asText(), again.toString());
      assertEquals(0, again.get("recordsDeleted").asLong(), again.toString());
      assertEquals(0.0, metric(metrics, "last_run_records_deleted"));
      assertTrue(metric(metrics, "last_success_timestamp_seconds") >= firstSuccess);

      // status: when the plan was COMMITTED and APPLIED, and that the boundary came from K1.
      Cli.Result status = Cli.run(env, "status", "--json");
      assertEquals(0, status.exit(), status.stdout() + status.stderr());
      JsonNode history = JSON.readTree(status.stdout());
      JsonNode operation = history.get("operations").get(0);
      assertEquals(k1.toString(), operation.get("sourceRecoveryPoint").asText());
      Instant committed = Instant.parse(operation.get("committedAt").asText());
      Instant applied = Instant.parse(operation.get("appliedAt").asText());
      assertTrue(
          !committed.isBefore(before.minusSeconds(5))
              && !applied.isBefore(committed)
              && !applied.isAfter(Instant.now()),
          operation.toString());
      // ASC_RETAINED is set: status measures what the newest point holds back, as apply did.
      JsonNode statusHeld = history.get("heldBelowNewestPoint");
      assertEquals(k2.toString(), statusHeld.get("point").asText(), statusHeld.toString());
      assertEquals(100, statusHeld.get("partitions").get("0").asLong(), statusHeld.toString());
      assertEquals(100, statusHeld.get("partitions").get("1").asLong(), statusHeld.toString());
      String planId = operation.get("planId").asText();
      history.get("boundaryOrigins").forEach(origin -> assertEquals(planId, origin.asText()));
      assertEquals(2, history.get("boundaryOrigins").size(), history.toString());

      // The job ran on through both cleanups; its effects stayed exactly once.
      h.release(220);
      h.awaitEffects(220);
      flink.cancel(job);
      assertNull(Effects.read(h.effects).exactlyOnceViolation(220));
      Harness.counts(
          "scheduled", "K1", Harness.offsets(planK1), "S", Harness.offsets(h.plan(s)), "K2",
          Harness.offsets(h.plan(k2)), "boundary", Kafka.beginnings(h.state), "recordsDeleted",
          report.get("recordsDeleted").asLong(), "secondRunDeleted",
          again.get("recordsDeleted").asLong());
    }
  }

  private static Map<Integer, Long> offsetsOf(JsonNode offsets) {
    Map<Integer, Long> m = new TreeMap<>();
    offsets.fieldNames().forEachRemaining(p -> m.put(Integer.parseInt(p), offsets.get(p).asLong()));
    return m;
  }

  /** The value of one series of the metrics file ({@code NAME{...} VALUE}). */
  private static double metric(Path file, String name) throws Exception {
    String series = "action_state_cleanup_apply_" + name + "{";
    return Files.readAllLines(file).stream()
        .filter(line -> line.startsWith(series))
        .map(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " in " + file));
  }
}

package io.actionstate.snapshotfixtures;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Every recovery point one running job keeps, for {@code plan --retained}: a job with periodic
 * checkpoints ({@code execution.checkpointing.num-retained: 3}, retained on cancellation) whose
 * markers advance with every checkpoint, and a savepoint taken while it runs. The job's
 * checkpoint directory (three {@code chk-N}) and the savepoint go to
 * fixtures/snapshots/retained/LINE/{checkpoints,savepoints}/ as Flink wrote them; points.json (not
 * expected.json: this is no single-snapshot case)
 * lists each point with the plan the State Processor API reads from it alone (the Java tool's
 * {@code plan --checkpoint} of that point).
 *
 * <p>Usage: RetainedGenerator REPO_ROOT
 */
public final class RetainedGenerator {
  static final Generator.Case CASE =
      new Generator.Case("retained", 21, false, null, "hashmap", Generator.Topology.BASIC,
          MarkerSpec.Kind.ADVANCING, 4, 100, Generator.UID);
  static final int RETAINED = 3;

  private RetainedGenerator() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: RetainedGenerator REPO_ROOT");
    }
    Plan.checkTestVector();
    Path repo = Paths.get(args[0]).toAbsolutePath().normalize();
    String line = "flink-" + EnvironmentInformation.getVersion().replaceAll("^(\\d+\\.\\d+).*", "$1");
    Path out = repo.resolve("fixtures/snapshots/retained").resolve(line);
    Generator.deleteTree(out);
    Path jobDir = Paths.get(Generator.CHECKPOINT_ROOT, CASE.jobId());
    Generator.deleteTree(jobDir);

    Configuration conf = Generator.jobConfig(CASE);
    conf.setString("execution.checkpointing.num-retained", Integer.toString(RETAINED));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    Generator.buildJob(env, CASE);
    JobClient client = env.executeAsync(CASE.name);
    Generator.waitRunning(client);
    waitFor(jobDir, 2);
    String pointer = Generator.triggerSavepoint(client, SavepointFormatType.CANONICAL);
    long afterSavepoint = Generator.latestCheckpoint(jobDir) + RETAINED + 1;
    waitFor(jobDir, afterSavepoint);
    Generator.cancel(client);
    Path savepoint = Paths.get(new org.apache.flink.core.fs.Path(pointer).toUri().getPath());
    System.out.println("  savepoint " + savepoint + ", checkpoints up to chk-" + Generator.latestCheckpoint(jobDir));

    // As Flink left them: every retained chk-N with its _metadata (and shared/, taskowned/).
    Path checkpoints = out.resolve("checkpoints").resolve(CASE.jobId());
    Generator.copyTree(jobDir, checkpoints, rel -> true);
    Path savepoints = out.resolve("savepoints").resolve(savepoint.getFileName().toString());
    Generator.copyTree(savepoint, savepoints, rel -> true);

    List<Path> points = new ArrayList<>();
    try (Stream<Path> s = Files.list(jobDir)) {
      points.addAll(s.filter(p -> Files.exists(p.resolve("_metadata")))
          .sorted((a, b) -> Long.compare(number(a), number(b))).collect(Collectors.toList()));
    }
    if (points.size() != RETAINED) {
      throw new IllegalStateException("retained " + points + ", expected " + RETAINED + " checkpoints");
    }
    points.add(savepoint);
    List<String> entries = new ArrayList<>();
    for (Path point : points) {
      Path fixture = point.equals(savepoint) ? savepoints : checkpoints.resolve(point.getFileName());
      String location = repo.relativize(fixture).toString();
      List<Object> markers = Generator.readMarkers(point.toString(), OperatorIdentifier.forUid(Generator.UID));
      Plan plan = Plan.fromRecoveryMarkers(location, markers);
      System.out.println("  " + location + ": " + plan.offsets);
      entries.add("{\"location\":" + Json.str(location)
          + ",\"markers\":[" + Generator.markerJson(markers) + "]"
          + ",\"plan\":" + Json.str(plan.text()) + "}");
    }
    String json = "{\"flink\":" + Json.str(EnvironmentInformation.getVersion())
        + ",\n \"operatorUid\":" + Json.str(Generator.UID)
        + ",\n \"checkpoints\":" + Json.str(repo.relativize(out.resolve("checkpoints")).toString())
        + ",\n \"savepoints\":" + Json.str(repo.relativize(out.resolve("savepoints")).toString())
        + ",\n \"points\":[\n  " + String.join(",\n  ", entries) + "]}\n";
    Files.write(out.resolve("points.json"), json.getBytes(StandardCharsets.UTF_8));
    System.exit(0);
  }

  static long number(Path chk) {
    return Long.parseLong(chk.getFileName().toString().substring(4));
  }

  static void waitFor(Path jobDir, long checkpoint) throws Exception {
    for (int i = 0; i < 1200 && Generator.latestCheckpoint(jobDir) < checkpoint; i++) {
      Thread.sleep(100);
    }
    if (Generator.latestCheckpoint(jobDir) < checkpoint) {
      throw new IllegalStateException("chk-" + checkpoint + " never completed in " + jobDir);
    }
  }
}

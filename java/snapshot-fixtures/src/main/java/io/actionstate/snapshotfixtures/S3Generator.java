package io.actionstate.snapshotfixtures;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Snapshots in an S3 server, written by a real Flink job through Flink's own S3 filesystem
 * (flink-s3-fs-presto, the plugin a production job writes s3:// checkpoints with), and read back
 * from the same s3:// URI with the State Processor API, as the Java tool does. For each case it
 * copies every object of the snapshot (a savepoint's folder; a checkpoint's job folder with the
 * retained chk-N and shared/) into fixtures/snapshots/s3/LINE/CASE/bucket/KEY and writes
 * expected.json with the URI and the Java tool's plan from that URI.
 *
 * <p>Usage: S3Generator REPO_ROOT ENDPOINT [CASE...]; the bucket {@value #BUCKET} must exist in the
 * S3 server at ENDPOINT (java/snapshot-fixtures/generate-s3 starts moto and creates it).
 */
public final class S3Generator {
  static final String BUCKET = "flink-state";
  static final String CHECKPOINTS = "s3://" + BUCKET + "/checkpoints";
  static final String SAVEPOINTS = "s3://" + BUCKET + "/savepoints";

  /** The cases, with job IDs of their own (000…0021NN, NN = 11, 12, 13). */
  static final List<Generator.Case> CASES = List.of(
      new Generator.Case("savepoint-canonical", 11, true, SavepointFormatType.CANONICAL, "hashmap",
          Generator.Topology.BASIC, MarkerSpec.Kind.VERSIONED, 4, 100, Generator.UID),
      new Generator.Case("checkpoint-rocksdb-incremental", 12, false, null, "rocksdb",
          Generator.Topology.MULTI, MarkerSpec.Kind.VERSIONED, 4, 100, Generator.UID),
      // Markers over the inline threshold: each subtask's operator state is an object of its own
      // beside _metadata, read through the store.
      new Generator.Case("savepoint-large-markers", 13, true, SavepointFormatType.CANONICAL, "hashmap",
          Generator.Topology.BASIC, MarkerSpec.Kind.VERSIONED, 3000, 100, Generator.UID),
      // Checkpoint file merging (FLIP-306): the subtasks' marker states are segments of files
      // that the checkpoint shares, in the job's shared/ or taskowned/ folders, not chk-N/.
      new Generator.Case("checkpoint-file-merging", 14, false, null, "hashmap",
          Generator.Topology.BASIC, MarkerSpec.Kind.VERSIONED, 3000, 100, Generator.UID));

  private S3Generator() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: S3Generator REPO_ROOT ENDPOINT [CASE...]");
    }
    Plan.checkTestVector();
    Path repo = Paths.get(args[0]).toAbsolutePath().normalize();
    Configuration store = storeConfig(args[1]);
    // Flink's filesystems for this JVM (client and MiniCluster alike): the S3 factory reads its
    // s3.* keys from here, exactly as a TaskManager reads them from config.yaml.
    FileSystem.initialize(store, null);
    List<String> only = List.of(args).subList(2, args.length);
    String line = "flink-" + EnvironmentInformation.getVersion().replaceAll("^(\\d+\\.\\d+).*", "$1");
    for (Generator.Case c : CASES) {
      if (!only.isEmpty() && !only.contains(c.name)) {
        continue;
      }
      System.out.println("=== s3/" + line + " / " + c.name + " (job " + c.jobId() + ")");
      generate(repo.resolve("fixtures/snapshots/s3").resolve(line).resolve(c.name), c, store);
    }
    System.exit(0);
  }

  /** The keys Flink's S3 filesystems read (also what the CLI's --flink-config reads). */
  static Configuration storeConfig(String endpoint) {
    Configuration conf = new Configuration();
    conf.setString("s3.endpoint", endpoint);
    conf.setString("s3.path.style.access", "true");
    conf.setString("s3.access-key", "flink");
    conf.setString("s3.secret-key", "flink-secret");
    return conf;
  }

  static void generate(Path caseDir, Generator.Case c, Configuration store) throws Exception {
    Generator.deleteTree(caseDir);
    String uri = runJob(c, store);
    String prefix = c.savepoint ? uri : uri.substring(0, uri.lastIndexOf('/'));
    int objects = download(prefix, caseDir.resolve("bucket"));
    System.out.println("  " + objects + " objects under " + prefix);

    byte[] metadata = Files.readAllBytes(
        caseDir.resolve("bucket").resolve(uri.substring(("s3://" + BUCKET + "/").length())).resolve("_metadata"));
    int version = Generator.readInt(metadata, 4);
    String text = new String(metadata, StandardCharsets.ISO_8859_1);
    if (!c.savepoint && !text.contains(prefix + "/shared/")) {
      throw new IllegalStateException("the checkpoint references no file under " + prefix + "/shared/");
    }

    // The Java tool's path: the State Processor API reads the snapshot from its s3:// URI.
    List<Object> markers = Generator.readMarkers(uri, OperatorIdentifier.forUid(c.uid));
    if (markers.size() != Generator.PARALLELISM) {
      throw new IllegalStateException("read " + markers.size() + " markers from " + uri);
    }
    Plan plan = Plan.fromRecoveryMarkers(uri, markers);
    System.out.println("  plan " + plan.planId + " over " + plan.offsets.size() + " partitions");

    String json = "{\"flink\":" + Json.str(EnvironmentInformation.getVersion())
        + ",\"case\":" + Json.str(c.name)
        + ",\n \"uri\":" + Json.str(uri)
        + ",\n \"operatorUid\":" + Json.str(c.uid)
        + ",\n \"operatorUidHash\":" + Json.str(OperatorIdentifier.forUid(c.uid).getOperatorId().toHexString())
        + ",\n \"metadataVersion\":" + version
        + ",\n \"objects\":" + objects
        + ",\n \"markers\":[" + Generator.markerJson(markers) + "]"
        + ",\n \"plan\":" + Json.str(plan.text())
        + "}\n";
    Files.write(caseDir.resolve("expected.json"), json.getBytes(StandardCharsets.UTF_8));
  }

  /** Runs the case's job writing to the S3 server; returns the snapshot's s3:// URI. */
  static String runJob(Generator.Case c, Configuration store) throws Exception {
    org.apache.flink.core.fs.Path jobDir = new org.apache.flink.core.fs.Path(CHECKPOINTS + "/" + c.jobId());
    FileSystem fs = jobDir.getFileSystem();
    fs.delete(jobDir, true);
    fs.delete(new org.apache.flink.core.fs.Path(SAVEPOINTS), true);

    Configuration conf = Generator.jobConfig(c);
    conf.addAll(store);
    conf.setString("execution.checkpointing.dir", CHECKPOINTS);
    conf.setString("execution.checkpointing.savepoint-dir", SAVEPOINTS);
    if (c.name.contains("file-merging")) {
      conf.setString("execution.checkpointing.file-merging.enabled", "true");
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    Generator.buildJob(env, c);
    JobClient client = env.executeAsync(c.name);
    Generator.waitRunning(client);
    if (c.savepoint) {
      Thread.sleep(2000);
      String pointer = Generator.triggerSavepoint(client, c.format);
      Generator.cancel(client);
      System.out.println("  savepoint " + pointer);
      return pointer;
    }
    long wanted = 2;   // the 2nd completed checkpoint references shared/ files the 1st uploaded
    for (int i = 0; i < 1200 && latestCheckpoint(fs, jobDir) < wanted; i++) {
      Thread.sleep(100);
    }
    Generator.cancel(client);
    long n = latestCheckpoint(fs, jobDir);
    if (n < wanted) {
      throw new IllegalStateException("only " + n + " checkpoints completed in " + jobDir);
    }
    String uri = jobDir + "/chk-" + n;
    System.out.println("  retained checkpoint " + uri);
    return uri;
  }

  static long latestCheckpoint(FileSystem fs, org.apache.flink.core.fs.Path jobDir) throws IOException {
    if (!fs.exists(jobDir)) {
      return 0;
    }
    long latest = 0;
    for (FileStatus s : fs.listStatus(jobDir)) {
      String name = s.getPath().getName();
      if (name.startsWith("chk-") && fs.exists(new org.apache.flink.core.fs.Path(s.getPath(), "_metadata"))) {
        latest = Math.max(latest, Long.parseLong(name.substring(4)));
      }
    }
    return latest;
  }

  /** Copies every object under PREFIX to TO/KEY (the key without the bucket); returns how many. */
  static int download(String prefix, Path to) throws IOException {
    String bucketRoot = "s3://" + BUCKET + "/";
    List<org.apache.flink.core.fs.Path> todo = new ArrayList<>(List.of(new org.apache.flink.core.fs.Path(prefix)));
    FileSystem fs = todo.get(0).getFileSystem();
    int count = 0;
    while (!todo.isEmpty()) {
      org.apache.flink.core.fs.Path dir = todo.remove(todo.size() - 1);
      FileStatus[] listing = fs.listStatus(dir);
      if (listing == null) {
        continue;
      }
      for (FileStatus s : listing) {
        if (s.isDir()) {
          todo.add(s.getPath());
          continue;
        }
        String key = s.getPath().toString().substring(bucketRoot.length());
        Path dest = to.resolve(key);
        Files.createDirectories(dest.getParent());
        try (InputStream in = fs.open(s.getPath())) {
          Files.copy(in, dest, StandardCopyOption.REPLACE_EXISTING);
        }
        count++;
      }
    }
    return count;
  }
}

package io.actionstate.snapshotfixtures;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.agents.runtime.actionstate.KafkaActionStateRecoveryMarker;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs real Flink streaming jobs on a MiniCluster (the Flink version on the classpath), takes the
 * savepoint or retained checkpoint of each case, copies it into fixtures/snapshots/LINE/CASE/,
 * then reads it back with Flink's own code (Checkpoints.loadCheckpointMetadata for the operator
 * listing, the State Processor API's readUnionState for the markers) and writes expected.json.
 *
 * <p>Usage: Generator LINE REPO_ROOT [CASE...]
 */
public final class Generator {
  static final String CHECKPOINT_ROOT = "/flink/checkpoints";
  static final String SAVEPOINT_ROOT = "/flink/savepoints";
  static final String TOPIC = "action-state";
  /** Kafka's 22-char URL-safe base64 form of a topic UUID. */
  static final String TOPIC_ID = "ZJxPrd2KS5KQ6e0bxWzD9g";
  static final String OTHER_TOPIC_ID = "q3Vh0dGOR9mxpL4Fj2kW7A";
  static final String UID = "agent-operator";
  static final String MARKER_CLASS = KafkaActionStateRecoveryMarker.class.getName();

  enum Topology { BASIC, KEYED, MULTI, UNALIGNED }

  /** One fixture case. */
  static final class Case {
    final String name;
    final int number;
    final boolean savepoint;
    final SavepointFormatType format;
    final String backend;
    final Topology topology;
    final MarkerSpec.Kind kind;
    final int partitions;
    final long baseOffset;
    final String uid;

    Case(String name, int number, boolean savepoint, SavepointFormatType format, String backend,
        Topology topology, MarkerSpec.Kind kind, int partitions, long baseOffset, String uid) {
      this.name = name;
      this.number = number;
      this.savepoint = savepoint;
      this.format = format;
      this.backend = backend;
      this.topology = topology;
      this.kind = kind;
      this.partitions = partitions;
      this.baseOffset = baseOffset;
      this.uid = uid;
    }

    String jobId() {
      return String.format("%032d", 2100 + number);
    }
  }

  static final List<Case> CASES = List.of(
      new Case("savepoint-canonical", 1, true, SavepointFormatType.CANONICAL, "hashmap",
          Topology.BASIC, MarkerSpec.Kind.VERSIONED, 4, 100, UID),
      new Case("savepoint-native-rocksdb", 2, true, SavepointFormatType.NATIVE, "rocksdb",
          Topology.KEYED, MarkerSpec.Kind.VERSIONED, 4, 100, UID),
      new Case("checkpoint-rocksdb-incremental", 3, false, null, "rocksdb",
          Topology.MULTI, MarkerSpec.Kind.VERSIONED, 4, 100, UID),
      new Case("checkpoint-unaligned", 4, false, null, "hashmap",
          Topology.UNALIGNED, MarkerSpec.Kind.VERSIONED, 4, 100, UID),
      // 3,000 entries of 7 Kryo bytes each (offsets up to 30,101) exceed the default 20 KB inline
      // threshold: each subtask's operator state goes to a file beside _metadata.
      new Case("savepoint-large-markers", 5, true, SavepointFormatType.CANONICAL, "hashmap",
          Topology.BASIC, MarkerSpec.Kind.VERSIONED, 3000, 100, UID),
      new Case("savepoint-legacy", 6, true, SavepointFormatType.CANONICAL, "hashmap",
          Topology.BASIC, MarkerSpec.Kind.LEGACY, 4, 100, UID),
      new Case("savepoint-two-topic-ids", 7, true, SavepointFormatType.CANONICAL, "hashmap",
          Topology.BASIC, MarkerSpec.Kind.TWO_TOPIC_IDS, 4, 100, UID),
      new Case("savepoint-empty", 8, true, SavepointFormatType.CANONICAL, "hashmap",
          Topology.BASIC, MarkerSpec.Kind.EMPTY, 4, 100, UID),
      new Case("savepoint-no-uid", 9, true, SavepointFormatType.CANONICAL, "hashmap",
          Topology.BASIC, MarkerSpec.Kind.VERSIONED, 4, 100, null));

  static final int PARALLELISM = 2;

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: Generator LINE REPO_ROOT [CASE...]");
    }
    Plan.checkTestVector();
    String line = args[0];
    Path repo = Paths.get(args[1]).toAbsolutePath().normalize();
    List<String> only = List.of(args).subList(2, args.length);
    for (Case c : CASES) {
      if (!only.isEmpty() && !only.contains(c.name)) {
        continue;
      }
      System.out.println("=== " + line + " / " + c.name + " (job " + c.jobId() + ")");
      generate(line, repo, c);
    }
  }

  // ---------------------------------------------------------------- running the job

  static Configuration jobConfig(Case c) {
    Map<String, String> m = new HashMap<>();
    m.put("$internal.pipeline.job-id", c.jobId());
    m.put("execution.checkpointing.dir", "file://" + CHECKPOINT_ROOT);
    m.put("execution.checkpointing.savepoint-dir", "file://" + SAVEPOINT_ROOT);
    m.put("state.backend.type", c.backend);
    m.put("parallelism.default", Integer.toString(PARALLELISM));
    m.put("pipeline.generic-types", "true");
    // Small network buffers keep in-flight (channel) state small.
    m.put("taskmanager.memory.segment-size", "4kb");
    m.put("rest.bind-port", "0");
    // RocksDB's OPTIONS file (part of the state) records its working directory (wal_dir in
    // 1.20): keep it under the neutral root too, not under the machine's temp directory.
    m.put("state.backend.rocksdb.localdir", "/flink/rocksdb");
    if (!c.savepoint) {
      m.put("execution.checkpointing.interval", "1s");
      m.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
      m.put("execution.checkpointing.num-retained", "1");
    }
    if (c.topology == Topology.MULTI) {
      m.put("execution.checkpointing.incremental", "true");
      // SST files are only a few KB: without this they would be inlined into _metadata and no
      // shared/ file would exist.
      m.put("execution.checkpointing.data-inline-threshold", "1kb");
    }
    if (c.topology == Topology.UNALIGNED) {
      m.put("execution.checkpointing.unaligned.enabled", "true");
      m.put("execution.checkpointing.aligned-checkpoint-timeout", "0s");
      m.put("taskmanager.network.memory.buffers-per-channel", "1");
      m.put("taskmanager.network.memory.floating-buffers-per-gate", "1");
      m.put("taskmanager.network.memory.max-buffers-per-channel", "2");
    }
    return Configuration.fromMap(m);
  }

  static DataStream<Long> source(StreamExecutionEnvironment env, double perSecond) {
    return env.fromSource(
            new DataGeneratorSource<>(i -> i, Long.MAX_VALUE, RateLimiterStrategy.perSecond(perSecond), Types.LONG),
            WatermarkStrategy.noWatermarks(),
            "source")
        .uid("source");
  }

  static SingleOutputStreamOperator<Long> withUid(SingleOutputStreamOperator<Long> op, String uid) {
    return uid == null ? op : op.uid(uid);
  }

  static void buildJob(StreamExecutionEnvironment env, Case c) {
    MarkerSpec spec = new MarkerSpec(
        c.kind, TOPIC, TOPIC_ID, OTHER_TOPIC_ID, c.partitions, c.baseOffset, PARALLELISM);
    switch (c.topology) {
      case BASIC: {
        SingleOutputStreamOperator<Long> marker =
            withUid(source(env, 50).process(new Functions.Marker(spec)).name("agent-operator"), c.uid);
        marker.sinkTo(new DiscardingSink<>()).uid("sink").name("sink");
        break;
      }
      case KEYED: {
        SingleOutputStreamOperator<Long> marker = withUid(
            source(env, 100).keyBy(v -> v % 16, Types.LONG)
                .process(new Functions.KeyedMarker(spec)).name("agent-operator"), c.uid);
        marker.sinkTo(new DiscardingSink<>()).uid("sink").name("sink");
        break;
      }
      case MULTI: {
        SingleOutputStreamOperator<Long> marker = withUid(
            source(env, 100).keyBy(v -> v % 16, Types.LONG)
                .process(new Functions.KeyedMarker(spec)).name("agent-operator"), c.uid);
        // Parallelism 1 behind the marker operator: every RocksDB instance adds a ~20 KB OPTIONS
        // file to the checkpoint, and the fixtures must stay small.
        SingleOutputStreamOperator<Long> enricher = marker.keyBy(v -> v % 7, Types.LONG)
            .process(new Functions.Enricher()).uid("enricher").name("enricher").setParallelism(1);
        SingleOutputStreamOperator<Long> aggregator = enricher.keyBy(v -> v % 5, Types.LONG)
            .process(new Functions.Aggregator()).uid("aggregator").name("aggregator").setParallelism(1);
        aggregator.sinkTo(new DiscardingSink<>()).uid("sink").name("sink").setParallelism(1);
        break;
      }
      case UNALIGNED: {
        // The slow end takes 200 records/s, the source offers 300/s: the backlog (and with it the
        // in-flight data each unaligned checkpoint stores) grows by ~1.2 KB/s instead of filling
        // every network buffer at once.
        SingleOutputStreamOperator<Long> marker =
            withUid(source(env, 300).process(new Functions.Marker(spec)).name("agent-operator"), c.uid);
        SingleOutputStreamOperator<Long> slow = marker.rebalance()
            .process(new Functions.Slow(5)).uid("slow-sink").name("slow-sink").setParallelism(1);
        slow.sinkTo(new DiscardingSink<>()).uid("sink").name("sink").setParallelism(1);
        break;
      }
      default:
        throw new IllegalStateException();
    }
  }

  static void waitRunning(JobClient client) throws Exception {
    for (int i = 0; i < 600; i++) {
      if (client.getJobStatus().get() == JobStatus.RUNNING) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("job did not reach RUNNING");
  }

  static void cancel(JobClient client) throws Exception {
    client.cancel().get(60, TimeUnit.SECONDS);
    try {
      client.getJobExecutionResult().get(120, TimeUnit.SECONDS);
    } catch (ExecutionException expected) {
      // cancelled
    }
  }

  /**
   * A savepoint of the running job, its pointer: tried again (up to 20 times, a second apart)
   * while Flink declines it because a task is not running yet.
   */
  static String triggerSavepoint(JobClient client, SavepointFormatType format) throws Exception {
    for (int attempt = 0; ; attempt++) {
      try {
        return client.triggerSavepoint(null, format).get(120, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        if (attempt >= 20) {
          throw e;
        }
        System.out.println("  savepoint attempt " + attempt + " failed: " + e.getCause());
        Thread.sleep(1000);
      }
    }
  }

  /** Runs the case's job and returns the local directory of its savepoint or checkpoint. */
  static Path runJob(Case c) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(jobConfig(c));
    buildJob(env, c);
    JobClient client = env.executeAsync(c.name);
    waitRunning(client);
    if (c.savepoint) {
      Thread.sleep(2000);
      String pointer = triggerSavepoint(client, c.format);
      cancel(client);
      System.out.println("  savepoint " + pointer);
      return Paths.get(new org.apache.flink.core.fs.Path(pointer).toUri().getPath());
    }
    Path jobDir = Paths.get(CHECKPOINT_ROOT, c.jobId());
    // Incremental: the 2nd completed checkpoint already references files the 1st uploaded to
    // shared/. Unaligned: by the 4th, the slow end has built up a backlog.
    long wanted = c.topology == Topology.UNALIGNED ? 4 : 2;
    for (int i = 0; i < 1200 && latestCheckpoint(jobDir) < wanted; i++) {
      Thread.sleep(100);
    }
    cancel(client);
    long n = latestCheckpoint(jobDir);
    if (n < wanted) {
      throw new IllegalStateException("only " + n + " checkpoints completed in " + jobDir);
    }
    System.out.println("  retained checkpoint " + jobDir.resolve("chk-" + n));
    return jobDir.resolve("chk-" + n);
  }

  static long latestCheckpoint(Path jobDir) throws IOException {
    if (!Files.isDirectory(jobDir)) {
      return 0;
    }
    try (Stream<Path> s = Files.list(jobDir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .mapToLong(p -> Long.parseLong(p.getFileName().toString().substring(4)))
          .max().orElse(0);
    }
  }

  // ---------------------------------------------------------------- files

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(q);
      }
    }
  }

  static void copyTree(Path from, Path to, java.util.function.Predicate<Path> keep) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : s.collect(Collectors.toList())) {
        Path rel = from.relativize(p);
        if (!keep.test(rel)) {
          continue;
        }
        Path dest = to.resolve(rel.toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(dest);
        } else {
          Files.createDirectories(dest.getParent());
          Files.copy(p, dest, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  // ---------------------------------------------------------------- generate one case

  static void generate(String line, Path repo, Case c) throws Exception {
    Path caseDir = repo.resolve("fixtures/snapshots").resolve(line).resolve(c.name);
    deleteTree(caseDir);
    deleteTree(Paths.get(CHECKPOINT_ROOT, c.jobId()));
    Path snapshot = runJob(c);

    Path fixtureSnapshot;   // the directory the test gives to plan --checkpoint
    String readPath;        // what the State Processor API reads
    if (c.savepoint) {
      fixtureSnapshot = caseDir.resolve("savepoint");
      copyTree(snapshot, fixtureSnapshot, rel -> true);
      readPath = fixtureSnapshot.toString();   // relative handles: the copy is self-contained
    } else {
      Path jobDir = snapshot.getParent();
      String keepChk = snapshot.getFileName().toString();
      copyTree(jobDir, caseDir.resolve(jobDir.getFileName().toString()), rel -> {
        String first = rel.getNameCount() == 0 ? "" : rel.getName(0).toString();
        return !first.startsWith("chk-") || first.equals(keepChk);
      });
      fixtureSnapshot = caseDir.resolve(jobDir.getFileName().toString()).resolve(keepChk);
      readPath = snapshot.toString();          // absolute file: paths inside _metadata
    }
    String checkpointArg = repo.relativize(fixtureSnapshot).toString();

    byte[] metadataBytes = Files.readAllBytes(fixtureSnapshot.resolve("_metadata"));
    int magic = readInt(metadataBytes, 0);
    int version = readInt(metadataBytes, 4);
    if (magic != 0x4960672d) {
      throw new IllegalStateException("unexpected _metadata magic " + Integer.toHexString(magic));
    }
    CheckpointMetadata metadata;
    try (InputStream in = new BufferedInputStream(Files.newInputStream(fixtureSnapshot.resolve("_metadata")))) {
      metadata = Checkpoints.loadCheckpointMetadata(
          new DataInputStream(in), Generator.class.getClassLoader(), fixtureSnapshot.toString());
    }

    // The marker operator: by uid (murmur3 hash, Flink's own computation), else by its state name.
    OperatorID markerId = null;
    for (OperatorState op : metadata.getOperatorStates()) {
      if (operatorStateNames(op).contains("recoveryMarker")) {
        if (markerId != null) {
          throw new IllegalStateException("two operators hold recoveryMarker");
        }
        markerId = op.getOperatorID();
      }
    }
    if (markerId == null) {
      throw new IllegalStateException("no operator holds recoveryMarker");
    }
    if (c.uid != null && !OperatorIdentifier.forUid(c.uid).getOperatorId().equals(markerId)) {
      throw new IllegalStateException("uid hash " + OperatorIdentifier.forUid(c.uid).getOperatorId()
          + " is not the marker operator " + markerId);
    }
    String uidHash = markerId.toHexString();

    StringBuilder ops = new StringBuilder();
    boolean anyChannelState = false;
    for (OperatorState op : metadata.getOperatorStates()) {
      boolean channel = hasChannelState(op);
      anyChannelState |= channel;
      if (ops.length() > 0) {
        ops.append(",\n  ");
      }
      ops.append("{\"id\":").append(Json.str(op.getOperatorID().toHexString()))
          .append(",\"parallelism\":").append(op.getParallelism())
          .append(",\"maxParallelism\":").append(op.getMaxParallelism())
          .append(",\"operatorStates\":[")
          .append(operatorStateNames(op).stream().map(Json::str).collect(Collectors.joining(",")))
          .append("],\"managedKeyedState\":").append(any(op, s -> !s.getManagedKeyedState().isEmpty()))
          .append(",\"rawKeyedState\":").append(any(op, s -> !s.getRawKeyedState().isEmpty()))
          .append(",\"channelState\":").append(channel)
          .append(",\"coordinatorState\":").append(op.getCoordinatorState() != null)
          .append('}');
      describe(op, markerId);
    }
    System.out.println("  _metadata version " + version + ", checkpoint " + metadata.getCheckpointId()
        + ", " + metadataBytes.length + " bytes");

    checkShape(c, fixtureSnapshot, metadata, markerId, anyChannelState, metadataBytes);
    checkFiles(c, caseDir, fixtureSnapshot, metadata);

    // The markers, as the Java tool reads them.
    List<Object> markers = readMarkers(readPath, c.uid != null ? OperatorIdentifier.forUid(c.uid)
        : OperatorIdentifier.forUidHash(uidHash));
    // And by hash too: the same elements.
    if (c.uid != null) {
      List<Object> byHash = readMarkers(readPath, OperatorIdentifier.forUidHash(uidHash));
      if (!markerJson(byHash).equals(markerJson(markers))) {
        throw new IllegalStateException("forUid and forUidHash read different markers");
      }
    }
    int expectedCount = c.kind == MarkerSpec.Kind.EMPTY ? 0 : PARALLELISM;
    if (markers.size() != expectedCount) {
      throw new IllegalStateException("read " + markers.size() + " markers, expected " + expectedCount);
    }
    String outcome;
    try {
      Plan plan = Plan.fromRecoveryMarkers(checkpointArg, markers);
      outcome = "\"plan\":" + Json.str(plan.text());
      System.out.println("  plan " + plan.planId + " over " + plan.offsets.size() + " partitions");
    } catch (IllegalArgumentException e) {
      outcome = "\"error\":" + Json.str(e.getMessage());
      System.out.println("  error: " + e.getMessage());
    }

    StringBuilder json = new StringBuilder();
    json.append("{\"flink\":").append(Json.str(EnvironmentInformation.getVersion()))
        .append(",\"case\":").append(Json.str(c.name))
        .append(",\n \"checkpoint\":").append(Json.str(checkpointArg))
        .append(",\n \"operatorUid\":").append(Json.str(c.uid))
        .append(",\n \"operatorUidHash\":").append(Json.str(uidHash))
        .append(",\n \"checkpointId\":").append(metadata.getCheckpointId())
        .append(",\n \"metadataVersion\":").append(version)
        .append(",\n \"operators\":[\n  ").append(ops).append("]")
        .append(",\n \"markers\":[").append(markerJson(markers)).append("]")
        .append(",\n ").append(outcome)
        .append("}\n");
    Files.write(caseDir.resolve("expected.json"), json.toString().getBytes(StandardCharsets.UTF_8));
  }

  static int readInt(byte[] b, int at) {
    return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
  }

  interface SubtaskTest {
    boolean test(OperatorSubtaskState s);
  }

  static boolean any(OperatorState op, SubtaskTest t) {
    for (OperatorSubtaskState s : op.getSubtaskStates().values()) {
      if (t.test(s)) {
        return true;
      }
    }
    return false;
  }

  static boolean hasChannelState(OperatorState op) {
    return any(op, s -> !s.getInputChannelState().isEmpty() || !s.getResultSubpartitionState().isEmpty());
  }

  static List<String> operatorStateNames(OperatorState op) {
    TreeSet<String> names = new TreeSet<>();
    for (OperatorSubtaskState s : op.getSubtaskStates().values()) {
      for (OperatorStateHandle h : s.getManagedOperatorState()) {
        names.addAll(h.getStateNameToPartitionOffsets().keySet());
      }
    }
    return new ArrayList<>(names);
  }

  /** Diagnostics for the README's observed facts. */
  static void describe(OperatorState op, OperatorID markerId) {
    StringBuilder b = new StringBuilder("  op ").append(op.getOperatorID().toHexString());
    if (op.getOperatorID().equals(markerId)) {
      b.append(" [marker]");
    }
    b.append(" p=").append(op.getParallelism()).append(" maxp=").append(op.getMaxParallelism())
        .append(" subtasks=").append(op.getSubtaskStates().size())
        .append(" coordinator=").append(op.getCoordinatorState() == null ? "-" : op.getCoordinatorState().getStateSize() + "B")
        .append(" states=").append(operatorStateNames(op));
    System.out.println(b);
    for (Map.Entry<Integer, OperatorSubtaskState> e : new java.util.TreeMap<>(op.getSubtaskStates()).entrySet()) {
      OperatorSubtaskState s = e.getValue();
      List<String> parts = new ArrayList<>();
      for (OperatorStateHandle h : s.getManagedOperatorState()) {
        StreamStateHandle d = h.getDelegateStateHandle();
        parts.add("managedOp=" + h.getClass().getSimpleName() + "->" + d.getClass().getSimpleName()
            + "(" + d.getStateSize() + "B) " + h.getStateNameToPartitionOffsets());
      }
      for (OperatorStateHandle h : s.getRawOperatorState()) {
        parts.add("rawOp=" + h.getClass().getSimpleName());
      }
      for (KeyedStateHandle h : s.getManagedKeyedState()) {
        parts.add("managedKeyed=" + h.getClass().getSimpleName() + "(" + h.getStateSize() + "B)");
      }
      for (KeyedStateHandle h : s.getRawKeyedState()) {
        parts.add("rawKeyed=" + h.getClass().getSimpleName());
      }
      for (Object h : s.getInputChannelState()) {
        parts.add("input=" + h.getClass().getSimpleName() + "(" + ((org.apache.flink.runtime.state.StateObject) h).getStateSize() + "B)");
      }
      for (Object h : s.getResultSubpartitionState()) {
        parts.add("output=" + h.getClass().getSimpleName() + "(" + ((org.apache.flink.runtime.state.StateObject) h).getStateSize() + "B)");
      }
      if (!parts.isEmpty()) {
        System.out.println("    subtask " + e.getKey() + ": " + String.join("; ", parts));
      }
    }
  }

  /** Fails generation when a case does not have the shape it exists for. */
  static void checkShape(Case c, Path snapshot, CheckpointMetadata metadata, OperatorID markerId,
      boolean anyChannelState, byte[] metadataBytes) {
    OperatorState marker = metadata.getOperatorStates().stream()
        .filter(o -> o.getOperatorID().equals(markerId)).findFirst().orElseThrow();
    if (c.topology == Topology.UNALIGNED && !anyChannelState) {
      throw new IllegalStateException("unaligned checkpoint holds no channel state");
    }
    if (c.topology != Topology.UNALIGNED && anyChannelState) {
      throw new IllegalStateException("unexpected channel state");
    }
    boolean markerInline = true;
    for (OperatorSubtaskState s : marker.getSubtaskStates().values()) {
      for (OperatorStateHandle h : s.getManagedOperatorState()) {
        markerInline &= h.getDelegateStateHandle() instanceof org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
      }
    }
    if (c.name.equals("savepoint-large-markers") && markerInline) {
      throw new IllegalStateException("large markers are inline in _metadata, not in a file");
    }
    if (c.savepoint && !c.name.equals("savepoint-large-markers") && !markerInline) {
      throw new IllegalStateException("markers are not inline in _metadata");
    }
    if ((c.topology == Topology.KEYED || c.topology == Topology.MULTI)
        && marker.getSubtaskStates().values().stream().allMatch(s -> s.getManagedKeyedState().isEmpty())) {
      throw new IllegalStateException("the marker operator has no keyed state");
    }
    if (c.topology == Topology.MULTI) {
      String text = new String(metadataBytes, StandardCharsets.ISO_8859_1);
      if (!text.contains("/shared/")) {
        throw new IllegalStateException("the incremental checkpoint references no shared/ file");
      }
      long stateful = metadata.getOperatorStates().stream()
          .filter(o -> any(o, s -> !s.getManagedKeyedState().isEmpty())
              && any(o, s -> !s.getManagedOperatorState().isEmpty()))
          .count();
      if (stateful < 3) {
        throw new IllegalStateException("fewer than 3 operators with keyed and operator state");
      }
    }
  }

  /**
   * Every file handle in _metadata must point at a file of the fixture (checkpoints: by the job
   * directory; savepoints: beside _metadata), and every file of the fixture must be referenced.
   */
  static void checkFiles(Case c, Path caseDir, Path snapshot, CheckpointMetadata metadata)
      throws IOException {
    List<Object> handles = new ArrayList<>();
    for (OperatorState op : metadata.getOperatorStates()) {
      for (OperatorSubtaskState s : op.getSubtaskStates().values()) {
        handles.addAll(s.getManagedOperatorState());
        handles.addAll(s.getRawOperatorState());
        handles.addAll(s.getManagedKeyedState());
        handles.addAll(s.getRawKeyedState());
        handles.addAll(s.getInputChannelState());
        handles.addAll(s.getResultSubpartitionState());
      }
    }
    java.util.Set<Path> referenced = new java.util.TreeSet<>();
    int inline = 0;
    java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>(handles);
    java.util.Set<Object> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    while (!todo.isEmpty()) {
      Object h = todo.pop();
      if (h == null || !seen.add(h)) {
        continue;
      }
      if (h instanceof org.apache.flink.runtime.state.filesystem.FileStateHandle) {
        String path = ((org.apache.flink.runtime.state.filesystem.FileStateHandle) h).getFilePath().toUri().getPath();
        Path local = path.startsWith(CHECKPOINT_ROOT + "/")
            ? caseDir.resolve(path.substring(CHECKPOINT_ROOT.length() + 1))
            : Paths.get(path);
        if (!local.normalize().startsWith(caseDir)) {
          throw new IllegalStateException("file handle outside the fixture: " + path);
        }
        if (!Files.isRegularFile(local)) {
          throw new IllegalStateException("file handle without a file in the fixture: " + path);
        }
        referenced.add(local.normalize());
        continue;
      }
      if (h instanceof org.apache.flink.runtime.state.memory.ByteStreamStateHandle) {
        inline++;
        continue;
      }
      for (String getter : List.of("getDelegateStateHandle", "getDelegate", "getMetaStateHandle",
          "getMetaDataStateHandle", "getSharedState", "getPrivateState", "getHandle")) {
        try {
          java.lang.reflect.Method m = h.getClass().getMethod(getter);
          Object v = m.invoke(h);
          if (v instanceof java.util.Collection) {
            todo.addAll((java.util.Collection<?>) v);
          } else if (v != null) {
            todo.add(v);
          }
        } catch (NoSuchMethodException e) {
          // not this kind of handle
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    List<Path> files;
    try (Stream<Path> s = Files.walk(caseDir)) {
      files = s.filter(Files::isRegularFile)
          .filter(p -> !p.getFileName().toString().equals("_metadata"))
          .filter(p -> !p.getFileName().toString().equals("expected.json"))
          .map(Path::normalize).sorted().collect(Collectors.toList());
    }
    for (Path f : files) {
      if (!referenced.contains(f)) {
        throw new IllegalStateException("unreferenced file in the fixture: " + f);
      }
    }
    System.out.println("  " + referenced.size() + " files referenced and present, " + inline
        + " inline byte-stream handles");
  }

  // ---------------------------------------------------------------- State Processor API

  static List<Object> readMarkers(String path, OperatorIdentifier id) throws Exception {
    Map<String, String> conf = new HashMap<>();
    conf.put("parallelism.default", "1");
    conf.put("rest.bind-port", "0");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    SavepointReader reader = SavepointReader.read(env, path);
    DataStream<Object> stream =
        reader.readUnionState(id, "recoveryMarker", TypeInformation.of(Object.class));
    List<Object> out = new ArrayList<>();
    try (CloseableIterator<Object> it = stream.executeAndCollect()) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  static String markerJson(List<Object> markers) {
    List<String> items = new ArrayList<>();
    for (Object m : markers) {
      Map<String, String> fields = new LinkedHashMap<>();
      fields.put("class", Json.str(m.getClass().getName()));
      if (m instanceof KafkaActionStateRecoveryMarker) {
        KafkaActionStateRecoveryMarker k = (KafkaActionStateRecoveryMarker) m;
        fields.put("schemaVersion", Integer.toString(k.getSchemaVersion()));
        fields.put("topic", Json.str(k.getTopic()));
        fields.put("topicId", Json.str(k.getTopicId()));
        fields.put("offsets", Json.offsets(k.getOffsets()));
      } else if (m instanceof Map) {
        fields.put("offsets", Json.offsets((Map<Integer, Long>) m));
      } else {
        throw new IllegalStateException("unexpected marker element " + m.getClass());
      }
      items.add(fields.entrySet().stream().map(e -> Json.str(e.getKey()) + ":" + e.getValue())
          .collect(Collectors.joining(",", "{", "}")));
    }
    return items.isEmpty() ? "" : "\n  " + String.join(",\n  ", items);
  }
}

package io.actionstate.snapshotfixtures;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * The benchmark's JVM peer of {@code action-state-cleanup plan --checkpoint}: what the Flink Agents
 * Java tool's {@code plan --checkpoint} does for one snapshot, and nothing else. A Flink batch job
 * on a local MiniCluster reads the marker operator's union list state {@code recoveryMarker} with
 * the State Processor API ({@code SavepointReader.read(env, path)} then {@code readUnionState(
 * OperatorIdentifier.forUid(uid) | forUidHash(hash), "recoveryMarker",
 * TypeInformation.of(Object.class))}), collects the elements and builds the plan with
 * {@link Plan#fromRecoveryMarkers} (per-partition minimum, plan ID per SPEC §2); the plan text goes
 * to stdout with {@code sourceRecoveryPoint} = the path as given.
 *
 * <p>Snapshots in object stores ({@code s3://…}) are read as a Flink job reads them: through Flink's
 * filesystems (flink-s3-fs-presto is on this project's Flink 2.2 classpath), configured from the
 * {@code config.yaml} in {@code FLINK_CONF_DIR} ({@code s3.endpoint}, {@code s3.access-key}, …).
 *
 * <p>Usage: {@code PlanWithStateProcessorApi --checkpoint PATH (--operator-uid UID |
 * --operator-uid-hash HASH)}. A refusal (the tool's IllegalArgumentException) prints {@code error:
 * MESSAGE} on stderr and exits 1; a usage error exits 2. The bench (bench/src/snapshot.rs) checks
 * its output against every fixture's expected.json before timing it.
 */
public final class PlanWithStateProcessorApi {
  private PlanWithStateProcessorApi() {}

  public static void main(String[] args) throws Exception {
    String checkpoint = null;
    String uid = null;
    String uidHash = null;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--checkpoint": checkpoint = value; i++; break;
        case "--operator-uid": uid = value; i++; break;
        case "--operator-uid-hash": uidHash = value; i++; break;
        default: usage("unknown argument " + args[i]);
      }
    }
    if (checkpoint == null || (uid == null) == (uidHash == null)) {
      usage("--checkpoint and exactly one of --operator-uid or --operator-uid-hash are required");
    }
    String confDir = System.getenv("FLINK_CONF_DIR");
    if (confDir != null) {
      FileSystem.initialize(GlobalConfiguration.loadConfiguration(confDir), null);
    }
    OperatorIdentifier id = uid != null
        ? OperatorIdentifier.forUid(uid)
        : OperatorIdentifier.forUidHash(uidHash);
    List<Object> markers = readMarkers(checkpoint, id);
    Plan plan;
    try {
      plan = Plan.fromRecoveryMarkers(checkpoint, markers);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.exit(1);
      return;
    }
    System.out.print(plan.text());
    System.out.flush();
    // The MiniCluster's non-daemon threads may linger after the job: leave now, as a CLI does.
    System.exit(0);
  }

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

  private static void usage(String message) {
    System.err.println("usage: PlanWithStateProcessorApi --checkpoint PATH "
        + "(--operator-uid UID | --operator-uid-hash HASH)\n" + message);
    System.exit(2);
  }
}

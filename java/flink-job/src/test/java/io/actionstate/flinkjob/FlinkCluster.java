package io.actionstate.flinkjob;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * One Flink MiniCluster (2.3, or 2.2 with -P flink-2.2) per test class: one TaskManager with two slots (the action operator
 * runs with parallelism 2, the source shares a slot), the {@link Probe} metric reporter, and the
 * operations a test needs: submit (optionally restoring a savepoint or checkpoint), savepoint,
 * checkpoint, cancel, the job's failure, and the failure of the TaskManager.
 */
final class FlinkCluster {
  static final int SLOTS = 2;
  private static final Duration WAIT = Duration.ofSeconds(120);

  private final MiniCluster mini;
  private final Path dir;
  /** MiniCluster numbers TaskManagers by start order; a terminated index is never reused. */
  private int taskManager;

  private FlinkCluster(MiniCluster mini, Path dir) {
    this.mini = mini;
    this.dir = dir;
  }

  static FlinkCluster start(Path dir) throws Exception {
    return start(dir, Map.of());
  }

  /** A cluster with {@code extra} cluster settings (network buffers, say) over the defaults. */
  static FlinkCluster start(Path dir, Map<String, String> extra) throws Exception {
    Configuration config = new Configuration();
    config.setString("rest.bind-port", "0");
    config.setString("metrics.reporter.probe.factory.class", Probe.Factory.class.getName());
    // A JobManager setting (a job's own configuration cannot raise it): the failure tests check
    // every retained checkpoint, not just the latest.
    config.setString("execution.checkpointing.num-retained", "10");
    // Small network buffers: this job moves a few longs.
    config.setString("taskmanager.memory.network.min", "16mb");
    config.setString("taskmanager.memory.network.max", "16mb");
    extra.forEach(config::setString);
    MiniCluster mini =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(config)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(SLOTS)
                .build());
    mini.start();
    return new FlinkCluster(mini, dir);
  }

  Path dir() {
    return dir;
  }

  /**
   * The configuration every job of the tests starts from: hashmap state, checkpoints and
   * savepoints under the class's folder, retained checkpoints, no periodic checkpoints (tests
   * trigger them), up to 10 restarts 500 ms apart.
   */
  Map<String, String> jobConfig() {
    Map<String, String> m = new HashMap<>();
    m.put("state.backend.type", "hashmap");
    m.put("pipeline.generic-types", "true");
    m.put("execution.checkpointing.dir", dir.resolve("checkpoints").toUri().toString());
    m.put("execution.checkpointing.savepoint-dir", dir.resolve("savepoints").toUri().toString());
    m.put("execution.checkpointing.interval", "1h");
    m.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    m.put("restart-strategy.type", "fixed-delay");
    m.put("restart-strategy.fixed-delay.attempts", "10");
    m.put("restart-strategy.fixed-delay.delay", "500ms");
    return m;
  }

  /** Builds a job with {@code config}, submits it and returns its ID. */
  JobID submit(String name, Map<String, String> config, Consumer<StreamExecutionEnvironment> job)
      throws Exception {
    Map<String, String> all = new HashMap<>(config);
    all.put("pipeline.name", name);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(all));
    job.accept(env);
    JobGraph graph = env.getStreamGraph().getJobGraph();
    mini.submitJob(graph).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    return graph.getJobID();
  }

  /** Waits until every task of the job is RUNNING. */
  void awaitRunning(JobID job) throws Exception {
    Waits.until(
        "job " + job + " running",
        WAIT,
        () -> {
          AccessExecutionGraph graph = mini.getExecutionGraph(job).get();
          if (graph.getState().isGloballyTerminalState()) {
            throw new AssertionError("job " + job + " ended as " + graph.getState() + ": "
                + graph.getFailureInfo());
          }
          for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            if (v.getExecutionState() != ExecutionState.RUNNING) {
              return false;
            }
          }
          return graph.getState() == JobStatus.RUNNING;
        });
  }

  /** A canonical savepoint of the running job; its directory. */
  Path savepoint(JobID job) throws Exception {
    String pointer =
        mini.triggerSavepoint(
                job, dir.resolve("savepoints").toUri().toString(), false, SavepointFormatType.CANONICAL)
            .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    return Path.of(new org.apache.flink.core.fs.Path(pointer).toUri().getPath());
  }

  /** A checkpoint of the running job (aligned or unaligned as the job is configured). */
  Path checkpoint(JobID job) throws Exception {
    String pointer = mini.triggerCheckpoint(job).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    return Path.of(new org.apache.flink.core.fs.Path(pointer).toUri().getPath());
  }

  /** Whether the job runs with unaligned checkpoints (its checkpoint coordinator's settings). */
  boolean unalignedCheckpointsEnabled(JobID job) throws Exception {
    return mini.getExecutionGraph(job)
        .get()
        .getCheckpointCoordinatorConfiguration()
        .isUnalignedCheckpointsEnabled();
  }

  /** How often the job was restarted. */
  long restarts(JobID job) throws Exception {
    return mini.getExecutionGraph(job).get().getAllExecutionVertices().iterator().next()
        .getCurrentExecutionAttempt().getAttemptNumber();
  }

  void cancel(JobID job) throws Exception {
    mini.cancelJob(job).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    mini.requestJobResult(job).get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /** Waits for the job to end and returns why it failed (empty when it did not fail). */
  Optional<Throwable> failure(JobID job) throws Exception {
    JobResult result = mini.requestJobResult(job).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    return result.getSerializedThrowable().map(t -> t.deserializeError(getClass().getClassLoader()));
  }

  /** Terminates the TaskManager (every running task fails) and starts a fresh one. */
  void replaceTaskManager() throws Exception {
    mini.terminateTaskManager(taskManager).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    mini.startTaskManager();
    taskManager++;
  }

  void stop() throws Exception {
    mini.close();
  }
}

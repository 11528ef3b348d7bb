package io.actionstate.flinkjob;

import java.time.Duration;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ParameterTool;

/**
 * The job: action ids from a source (parallelism 1), keyed by agent ({@code id % 16}), performed
 * by the action operator (uid {@value #OPERATOR_UID}), whose output (the ids it performed) is
 * discarded. {@link #main} runs it on a real cluster; the tests build it with a source of their
 * own on a MiniCluster.
 */
public final class ActionJob {
  /** The action operator's uid: what {@code plan --checkpoint ... --operator-uid} names. */
  public static final String OPERATOR_UID = "agent-operator";

  /** Actions are keyed by agent; each agent's actions run in order on one subtask. */
  static final int AGENTS = 16;

  private ActionJob() {}

  /** The key of an action: its agent. */
  static long agentOf(long action) {
    return action % AGENTS;
  }

  /** Adds the pipeline to {@code env}: {@code actions} → keyBy agent → action operator. */
  public static void build(
      StreamExecutionEnvironment env,
      Source<Long, ?, ?> actions,
      JobSettings settings,
      int parallelism) {
    env.fromSource(actions, WatermarkStrategy.noWatermarks(), "actions")
        .uid("actions")
        .setParallelism(1)
        .keyBy(ActionJob::agentOf, Types.LONG)
        .transform(OPERATOR_UID, Types.LONG, new ActionOperator(settings))
        .uid(OPERATOR_UID)
        .setParallelism(parallelism)
        .sinkTo(new DiscardingSink<>())
        .uid("performed")
        .name("performed")
        .setParallelism(parallelism);
  }

  /**
   * Runs the job on a cluster ({@code flink run target/action-state-flink-job-0.1.0-all.jar ...}):
   * {@code --bootstrap-servers}, {@code --action-state-topic}, {@code --effects-topic},
   * optionally {@code --control-topic} (enforce committed boundaries at restore),
   * {@code --actions} (how many; unbounded by default), {@code --actions-per-second} (10 by
   * default), {@code --parallelism} (of the action operator, 2 by default).
   */
  public static void main(String[] args) throws Exception {
    ParameterTool params = ParameterTool.fromArgs(args);
    JobSettings settings =
        JobSettings.of(
            Map.of("bootstrap.servers", params.getRequired("bootstrap-servers")),
            params.getRequired("action-state-topic"),
            params.getRequired("effects-topic"),
            params.get("control-topic"));
    long actions = params.getLong("actions", Long.MAX_VALUE);
    double perSecond = params.getDouble("actions-per-second", 10);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    if (env.getCheckpointInterval() <= 0) {
      env.enableCheckpointing(Duration.ofSeconds(10).toMillis());
    }
    build(
        env,
        new DataGeneratorSource<>(
            index -> index, actions, RateLimiterStrategy.perSecond(perSecond), Types.LONG),
        settings,
        params.getInt("parallelism", 2));
    env.execute("action-state-flink-job");
  }
}

package io.actionstate.flinkjob;

import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A metric reporter of the MiniCluster (configured by {@link FlinkCluster}) that keeps the action
 * operator's metrics where the test can read them: live ones by registration, and the final count
 * of every counter whose task ended, so a job's totals survive its restarts. Keyed by job name.
 */
public final class Probe implements MetricReporter {
  private static final Set<String> NAMES =
      Set.of(
          "actionsPerformed", "actionsSkipped", "replayedRecords", "replayUnfinished",
          "bufferedActions", "actionsArrived", "actionsArrivedAtSnapshot",
          "replayUnfinishedAtSnapshot");
  /** Live metrics: job name → (registration → metric). */
  private static final Map<String, Map<Registration, Metric>> LIVE = new ConcurrentHashMap<>();
  /** Final counts of ended tasks: job name + "/" + metric name → sum. */
  private static final Map<String, Long> ENDED = new ConcurrentHashMap<>();

  private record Registration(String name, String identifier, int identity) {}

  private static String job(MetricGroup group) {
    return group.getAllVariables().getOrDefault("<job_name>", "");
  }

  private static long value(Metric metric) {
    if (metric instanceof Counter c) {
      return c.getCount();
    }
    Object v = ((Gauge<?>) metric).getValue();
    return ((Number) v).longValue();
  }

  /** The sum of a counter over every task of the job that ever ran (restarts included). */
  static long total(String job, String name) {
    long sum = ENDED.getOrDefault(job + "/" + name, 0L);
    for (Map.Entry<Registration, Metric> e : LIVE.getOrDefault(job, Map.of()).entrySet()) {
      if (e.getKey().name().equals(name)) {
        sum += value(e.getValue());
      }
    }
    return sum;
  }

  /** The sum of a gauge over the job's running tasks, and how many report it. */
  static long[] live(String job, String name) {
    long sum = 0;
    long tasks = 0;
    for (Map.Entry<Registration, Metric> e : LIVE.getOrDefault(job, Map.of()).entrySet()) {
      if (e.getKey().name().equals(name)) {
        sum += value(e.getValue());
        tasks++;
      }
    }
    return new long[] {sum, tasks};
  }

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if (NAMES.contains(name)) {
      LIVE.computeIfAbsent(job(group), j -> new ConcurrentHashMap<>())
          .put(
              new Registration(name, group.getMetricIdentifier(name), System.identityHashCode(metric)),
              metric);
    }
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
    if (!NAMES.contains(name)) {
      return;
    }
    Map<Registration, Metric> live = LIVE.get(job(group));
    Registration key =
        new Registration(name, group.getMetricIdentifier(name), System.identityHashCode(metric));
    if (live != null && live.remove(key) != null && metric instanceof Counter c) {
      ENDED.merge(job(group) + "/" + name, c.getCount(), Long::sum);
    }
  }

  /** Flink finds the reporter through this factory (META-INF/services). */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(Properties properties) {
      return new Probe();
    }
  }
}

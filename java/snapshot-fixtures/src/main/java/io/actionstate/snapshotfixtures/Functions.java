package io.actionstate.snapshotfixtures;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/** The jobs' operators. Identical source for Flink 1.20 and 2.2 (only APIs present in both). */
public final class Functions {
  private Functions() {}

  /** Flink Agents' declaration: union list state "recoveryMarker" of TypeInformation.of(Object.class). */
  static ListState<Object> recoveryMarkerState(FunctionInitializationContext context)
      throws Exception {
    return context
        .getOperatorStateStore()
        .getUnionListState(
            new ListStateDescriptor<>("recoveryMarker", TypeInformation.of(Object.class)));
  }

  /** The marker operator (not keyed): at every snapshot each subtask replaces its list. */
  public static final class Marker extends ProcessFunction<Long, Long>
      implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private final MarkerSpec spec;
    private transient ListState<Object> markers;

    public Marker(MarkerSpec spec) {
      this.spec = spec;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      markers = recoveryMarkerState(context);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      markers.update(spec.markersFor(
          getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), context.getCheckpointId()));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) {
      out.collect(value);
    }
  }

  /** The marker operator behind keyBy: the same union state plus a keyed ValueState "count". */
  public static final class KeyedMarker extends KeyedProcessFunction<Long, Long, Long>
      implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private final MarkerSpec spec;
    private transient ListState<Object> markers;
    private transient ValueState<Long> count;

    public KeyedMarker(MarkerSpec spec) {
      this.spec = spec;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      markers = recoveryMarkerState(context);
      count = context.getKeyedStateStore().getState(new ValueStateDescriptor<>("count", Types.LONG));
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      markers.update(spec.markersFor(
          getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), context.getCheckpointId()));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
      Long c = count.value();
      count.update(c == null ? 1L : c + 1);
      out.collect(value);
    }
  }

  /** A second stateful operator: keyed ValueState "last" and a split list operator state. */
  public static final class Enricher extends KeyedProcessFunction<Long, Long, Long>
      implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private transient ValueState<Long> last;
    private transient ListState<Long> seen;
    private long seenCount;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      last = context.getKeyedStateStore().getState(new ValueStateDescriptor<>("last", Types.LONG));
      seen = context.getOperatorStateStore()
          .getListState(new ListStateDescriptor<>("enricher-seen", Types.LONG));
      for (Long s : seen.get()) {
        seenCount += s;
      }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      List<Long> l = new ArrayList<>();
      l.add(seenCount);
      seen.update(l);
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
      seenCount++;
      last.update(value);
      out.collect(value * 3 + 1);
    }
  }

  /** A third stateful operator: keyed MapState "totals" and a list operator state. */
  public static final class Aggregator extends KeyedProcessFunction<Long, Long, Long>
      implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private transient MapState<Long, Long> totals;
    private transient ListState<Long> progress;
    private long max;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      totals = context.getKeyedStateStore()
          .getMapState(new MapStateDescriptor<>("totals", Types.LONG, Types.LONG));
      progress = context.getOperatorStateStore()
          .getListState(new ListStateDescriptor<>("aggregator-progress", Types.LONG));
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      List<Long> l = new ArrayList<>();
      l.add(max);
      progress.update(l);
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
      long bucket = value % 4;
      Long t = totals.get(bucket);
      totals.put(bucket, t == null ? value : t + value);
      max = Math.max(max, value);
      out.collect(value);
    }
  }

  /** The slow end of the unaligned-checkpoint job: sleeps per record, so upstream backs up. */
  public static final class Slow extends ProcessFunction<Long, Long> {
    private static final long serialVersionUID = 1L;
    private final long sleepMillis;

    public Slow(long sleepMillis) {
      this.sleepMillis = sleepMillis;
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
      Thread.sleep(sleepMillis);
      out.collect(value);
    }
  }
}

package io.actionstate.flinkjob;

import io.actionstate.cleanup.Cleanup;
import io.actionstate.cleanup.RecoveryPolicy;
import io.actionstate.cleanup.RecoverySession;
import io.actionstate.cleanup.RecoveryVerdict;
import io.actionstate.cleanup.ReplayBatch;
import io.actionstate.cleanup.ReplayOptions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keyed operator that performs actions, in the shape of Flink Agents' action operator: each
 * incoming action id is performed once ({@link ActionWriter}: effect and completion record in one
 * transaction) unless the action-state topic says it already completed.
 *
 * <p><b>Restore</b> ({@link #initializeState}): the writer is opened first (fencing this subtask's
 * earlier attempts), then a {@link RecoverySession} of the cleanup component checks the union of
 * the restored markers against the committed boundary (a refusal fails the task, before any
 * action runs) and captures the end of every partition.
 *
 * <p><b>Replay</b> runs after the task is running, in steps of {@code replayBatchSize} records,
 * each step a mail of the task's mailbox (a processing-time callback): between two steps the task
 * takes checkpoints. Actions that arrive meanwhile wait in {@code pending}; a checkpoint stores
 * them (union list state {@code pendingActions}, each subtask keeps those of its key groups on
 * restore) and the marker of {@link RecoverySession#snapshotMarker}, which still carries the
 * restored offsets. Once the replay is done the waiting actions run, skipping completed ones.
 *
 * <p><b>Checkpoint</b> ({@link #snapshotState}): each subtask replaces its element of union list
 * state {@code recoveryMarker} with the marker the session gives (SPEC §9).
 */
final class ActionOperator extends AbstractStreamOperator<Long>
    implements OneInputStreamOperator<Long, Long> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOGGER = LoggerFactory.getLogger(ActionOperator.class);
  static final String MARKER_STATE = "recoveryMarker";
  static final String PENDING_STATE = "pendingActions";

  private final JobSettings settings;

  private transient ActionWriter writer;
  private transient Cleanup cleanup;
  private transient RecoverySession session;
  private transient ListState<Object> markerState;
  private transient ListState<Long> pendingState;
  /** Only with {@link JobSettings#declinedSnapshots}: a {@code true} here fails the write. */
  private transient ListState<Boolean> declineState;
  private transient ValueState<Long> performedByAgent;
  /** Actions the replay found completed: they completed after the restored snapshot. */
  private transient Set<Long> completed;
  /** Actions that arrived while the replay was unfinished, in arrival order. */
  private transient ArrayDeque<Long> pending;
  /** Read by the metric reporter's thread. */
  private transient volatile boolean replaying;
  private transient volatile int buffered;
  private transient Counter performed;
  private transient Counter skipped;
  private transient Counter replayed;
  /** Actions that arrived since this subtask started (restored in-flight data first). */
  private transient Counter arrived;
  /** At the latest snapshotState: how many had arrived, and whether the replay was unfinished. */
  private transient volatile long arrivedAtSnapshot = -1;
  private transient volatile boolean replayingAtSnapshot;
  /** Snapshots this attempt declined while replaying ({@link JobSettings#declinedSnapshots}). */
  private transient int declined;

  ActionOperator(JobSettings settings) {
    this.settings = settings;
  }

  private RecoveryPolicy policy() {
    String topic = settings.actionStateTopic();
    return settings.controlTopic() == null
        ? new RecoveryPolicy(Optional.of(topic), Optional.empty(), false)
        : RecoveryPolicy.enforced(topic, settings.controlTopic());
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    TaskInfo task = getRuntimeContext().getTaskInfo();
    markerState =
        context
            .getOperatorStateStore()
            .getUnionListState(
                new ListStateDescriptor<>(MARKER_STATE, TypeInformation.of(Object.class)));
    pendingState =
        context
            .getOperatorStateStore()
            .getUnionListState(new ListStateDescriptor<>(PENDING_STATE, Types.LONG));
    if (settings.declinedSnapshots() > 0) {
      declineState =
          context
              .getOperatorStateStore()
              .getListState(
                  new ListStateDescriptor<>("declineProbe", FailingWriteSerializer.INSTANCE));
    }
    performedByAgent =
        context.getKeyedStateStore().getState(new ValueStateDescriptor<>("performed", Types.LONG));
    completed = new HashSet<>();
    pending = new ArrayDeque<>();
    List<String> markers = new ArrayList<>();
    for (Object element : markerState.get()) {
      markers.add(Markers.toJson(element));
    }
    int parallelism = task.getNumberOfParallelSubtasks();
    if (!markers.isEmpty() && markers.size() != parallelism) {
      throw new IllegalStateException(
          "Restored " + markers.size() + " recovery markers (one per subtask of the snapshot), but"
              + " the action operator now runs with parallelism " + parallelism + ": restore with"
              + " parallelism " + markers.size() + ". Another parallelism would leave transactions"
              + " of the snapshot's other subtasks unfenced while the replay captures its end");
    }
    // The writer before the restore: opening it completes or aborts what an earlier attempt of
    // this subtask left open, so every completion that can still appear is below the end the
    // restore captures.
    writer = ActionWriter.open(settings, task.getIndexOfThisSubtask(), task.getAttemptNumber());
    cleanup = Cleanup.connect(new HashMap<>(settings.kafka()), settings.operationTimeout());
    session = cleanup.startRecovery(settings.actionStateTopic(), policy());
    if (!context.isRestored()) {
      return;
    }
    // Refuses a point below the committed boundary (the exception fails the task before any
    // action ran) and captures the end offsets the replay stops at.
    RecoveryVerdict verdict = session.restore(markers, ReplayOptions.defaults());
    LOGGER.info(
        "Subtask {} restored {} from {} markers: replaying {}",
        task.getIndexOfThisSubtask(),
        verdict.topic(),
        markers.size(),
        verdict.ranges());
    replaying = true;
    int maxParallelism = task.getMaxNumberOfParallelSubtasks();
    for (Long action : pendingState.get()) {
      int owner =
          KeyGroupRangeAssignment.assignKeyToParallelOperator(
              ActionJob.agentOf(action), maxParallelism, parallelism);
      if (owner == task.getIndexOfThisSubtask()) {
        pending.add(action);
      }
    }
    buffered = pending.size();
  }

  @Override
  public void open() throws Exception {
    super.open();
    performed = getMetricGroup().counter("actionsPerformed");
    skipped = getMetricGroup().counter("actionsSkipped");
    replayed = getMetricGroup().counter("replayedRecords");
    arrived = getMetricGroup().counter("actionsArrived");
    getMetricGroup().gauge("actionsArrivedAtSnapshot", () -> arrivedAtSnapshot);
    getMetricGroup().gauge("replayUnfinishedAtSnapshot", () -> replayingAtSnapshot ? 1 : 0);
    getMetricGroup().gauge("replayUnfinished", () -> replaying ? 1 : 0);
    getMetricGroup().gauge("bufferedActions", () -> buffered);
    if (replaying) {
      scheduleReplayStep(0);
    }
  }

  private void scheduleReplayStep(long delayMillis) {
    ProcessingTimeService time = getProcessingTimeService();
    time.registerTimer(time.getCurrentProcessingTime() + delayMillis, now -> replayStep());
  }

  /** One step of the replay, run as a mail; the next one is scheduled after the pause. */
  private void replayStep() throws Exception {
    if (!replaying) {
      return;
    }
    if (absorb(session.nextBatch(settings.replayBatchSize()))) {
      endReplay();
    } else {
      scheduleReplayStep(settings.replayPause().toMillis());
    }
  }

  /** Records the completions of one batch; true once the replay reached its captured end. */
  private boolean absorb(ReplayBatch batch) {
    for (ReplayBatch.Record r : batch.records()) {
      long action =
          ActionKeys.action(settings.actionStateTopic(), r.partition(), r.offset(), r.key());
      if (r.value() == null) {
        completed.remove(action);
      } else {
        completed.add(action);
      }
      replayed.inc();
    }
    return batch.done();
  }

  /** The replay is done: run the actions that waited for it, in arrival order. */
  private void endReplay() throws Exception {
    replaying = false;
    LOGGER.info(
        "Subtask {} replayed {} action-state records; {} actions waited for the replay",
        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
        replayed.getCount(),
        pending.size());
    while (!pending.isEmpty()) {
      long action = pending.poll();
      buffered = pending.size();
      setCurrentKey(ActionJob.agentOf(action));
      perform(action);
    }
  }

  /** Replays the rest at once (too many actions waiting, or the input ended). */
  private void finishReplay() throws Exception {
    while (replaying) {
      if (absorb(session.nextBatch(settings.replayBatchSize()))) {
        endReplay();
      }
    }
  }

  @Override
  public void processElement(StreamRecord<Long> element) throws Exception {
    if (!settings.elementPause().isZero()) {
      Thread.sleep(settings.elementPause().toMillis());
    }
    arrived.inc();
    long action = element.getValue();
    if (replaying) {
      pending.add(action);
      buffered = pending.size();
      if (pending.size() > settings.maxBufferedActions()) {
        finishReplay();
      }
      return;
    }
    perform(action);
  }

  /** Runs an action unless the replay found it completed. The key context is the action's. */
  private void perform(long action) throws Exception {
    if (completed.contains(action)) {
      skipped.inc();
      return;
    }
    writer.perform(action);
    Long count = performedByAgent.value();
    performedByAgent.update(count == null ? 1L : count + 1);
    performed.inc();
    output.collect(new StreamRecord<>(action));
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    if (declineState != null) {
      boolean decline =
          replaying
              && getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0
              && declined < settings.declinedSnapshots();
      if (decline) {
        declined++;
      }
      declineState.update(decline ? List.of(true) : List.of());
    }
    // While the replay is unfinished the session still answers the restored offsets.
    markerState.update(List.<Object>of(Markers.fromJson(session.snapshotMarker())));
    pendingState.update(new ArrayList<>(pending));
    arrivedAtSnapshot = arrived.getCount();
    replayingAtSnapshot = replaying;
  }

  @Override
  public void finish() throws Exception {
    finishReplay();
    super.finish();
  }

  /** Closes the session, the component (its admin client and consumer) and the writer. */
  @Override
  public void close() throws Exception {
    try {
      super.close();
    } finally {
      try {
        if (session != null) {
          session.close();
        }
      } finally {
        try {
          if (cleanup != null) {
            cleanup.close();
          }
        } finally {
          if (writer != null) {
            writer.close();
          }
        }
      }
    }
  }
}

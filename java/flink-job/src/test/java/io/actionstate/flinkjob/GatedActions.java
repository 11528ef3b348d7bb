package io.actionstate.flinkjob;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource.NumberSequenceSplit;
import org.apache.flink.core.io.InputStatus;

/**
 * The tests' action source: action ids 0, 1, 2, ... (Flink's {@link NumberSequenceSource}, whose
 * position is checkpointed), released by a gate the test raises: the reader emits id {@code n}
 * only once the gate's limit is above {@code n}, and otherwise reports nothing available (so the
 * task keeps taking checkpoints and savepoints while it waits). After a restore the reader
 * continues from the checkpointed position, so re-emitted ids need no new permission.
 *
 * <p>The gate lives in a static map of this JVM: the MiniCluster's tasks and the test share it.
 * Parallelism 1 (one split).
 */
final class GatedActions extends NumberSequenceSource {
  private static final long serialVersionUID = 1L;
  private static final Map<String, Gate> GATES = new ConcurrentHashMap<>();

  private final String gate;

  private GatedActions(String gate) {
    super(0, Long.MAX_VALUE);
    this.gate = gate;
  }

  /** A source whose gate starts closed (limit 0). */
  static GatedActions named(String gate) {
    GATES.putIfAbsent(gate, new Gate());
    return new GatedActions(gate);
  }

  /** Lets every action id below {@code limit} out. */
  static void open(String gate, long limit) {
    GATES.get(gate).raise(limit);
  }

  @Override
  public SourceReader<Long, NumberSequenceSplit> createReader(SourceReaderContext context) {
    return new Reader(super.createReader(context), GATES.get(gate));
  }

  /** Limit plus the futures of readers waiting for it to rise. */
  static final class Gate {
    private long limit;
    private CompletableFuture<Void> raised = new CompletableFuture<>();

    synchronized long limit() {
      return limit;
    }

    synchronized CompletableFuture<Void> raisedAbove(long action) {
      return limit > action ? CompletableFuture.completedFuture(null) : raised;
    }

    void raise(long to) {
      CompletableFuture<Void> waiting;
      synchronized (this) {
        limit = Math.max(limit, to);
        waiting = raised;
        raised = new CompletableFuture<>();
      }
      waiting.complete(null);
    }
  }

  /** Delegates to the sequence reader, holding back every id at or above the gate's limit. */
  // SourceReader's close() throws Exception, as Flink declares it; never used in a try block.
  @SuppressWarnings("try")
  private static final class Reader implements SourceReader<Long, NumberSequenceSplit> {
    private final SourceReader<Long, NumberSequenceSplit> sequence;
    private final Gate gate;
    /** The id the sequence emits next; -1 until its split arrives. */
    private long next = -1;

    Reader(SourceReader<Long, NumberSequenceSplit> sequence, Gate gate) {
      this.sequence = sequence;
      this.gate = gate;
    }

    @Override
    public void start() {
      sequence.start();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<Long> output) throws Exception {
      if (next < 0 || next >= gate.limit()) {
        return next < 0 ? sequence.pollNext(output) : InputStatus.NOTHING_AVAILABLE;
      }
      InputStatus status = sequence.pollNext(output);
      // The sequence reader emits exactly one record whenever it answers MORE_AVAILABLE.
      if (status == InputStatus.MORE_AVAILABLE) {
        next++;
      }
      return next < gate.limit() ? status : InputStatus.NOTHING_AVAILABLE;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
      return next < 0 ? sequence.isAvailable() : gate.raisedAbove(next);
    }

    @Override
    public void addSplits(List<NumberSequenceSplit> splits) {
      if (splits.size() != 1 || next >= 0) {
        throw new IllegalStateException("the gated source runs with parallelism 1: " + splits);
      }
      next = splits.get(0).from();
      sequence.addSplits(splits);
    }

    @Override
    public void notifyNoMoreSplits() {
      sequence.notifyNoMoreSplits();
    }

    @Override
    public List<NumberSequenceSplit> snapshotState(long checkpointId) {
      return sequence.snapshotState(checkpointId);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
      sequence.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void close() throws Exception {
      sequence.close();
    }
  }
}

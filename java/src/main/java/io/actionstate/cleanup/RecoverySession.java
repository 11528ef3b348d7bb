package io.actionstate.cleanup;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.GuestFault;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A runtime's recovery of one data topic (WIT {@code recovery.recovery-session}): created when the
 * job starts ({@link Cleanup#startRecovery}), it fixes the topic's identity, enforces the decision
 * table at {@link #restore}, replays exactly [requested, captured end) through {@link #nextBatch},
 * and writes checkpoint markers ({@link #snapshotMarker}).
 *
 * <p>Records never cross into the component: it sees partitions, offsets and flags, decides, and
 * returns indices into the consumer's latest poll; this class hands the caller those records.
 *
 * <p>Calls are synchronized on the owning {@link Cleanup}. After a trap discarded the instance the
 * session is gone: every call throws {@link IllegalStateException}; start a new session.
 */
public final class RecoverySession implements AutoCloseable {
  private static final String RESOURCE = "recovery-session";

  private final Cleanup owner;
  private final long handle;
  private final int generation;
  private boolean closed;

  RecoverySession(Cleanup owner, long handle, int generation) {
    this.owner = owner;
    this.handle = handle;
    this.generation = generation;
  }

  private long representation() {
    owner.checkOpen();
    if (closed) {
      throw new IllegalStateException("this recovery session is closed");
    }
    if (owner.host.generation() != generation) {
      throw new IllegalStateException(
          "this recovery session was lost when its component instance was discarded after a"
              + " fault; start a new one");
    }
    return owner.host.representation(RESOURCE, handle);
  }

  /**
   * Applies SPEC §6 to the markers (JSON texts) and positions the replay (WIT
   * {@code recovery-session.restore}). Every failure is the component's, with its failed-restore
   * rule applied: a marker without a UTF-8 form (a lone surrogate) is refused there as
   * {@code invalid-marker} ({@link UndecodableMarkers}), and after it, as after any failed
   * restore, {@link #snapshotMarker} refuses until a restore succeeds.
   *
   * @throws RecoveryRefusalException {@code boundary-violation} naming partition, requested
   *     offset and boundary (with every violating partition and who committed the boundary);
   *     {@code recovery-refused}; {@code topic-changed}; {@code offsets-unavailable};
   *     {@code invalid-marker}; {@code invalid-argument}; {@code kafka}; ...
   */
  public RecoveryVerdict restore(List<String> markers, ReplayOptions options)
      throws CleanupException {
    synchronized (owner) {
      long rep = representation();
      return Cleanup.verdictOrRefusal(
          owner.host.call(
              CleanupWit.SESSION_RESTORE,
              rep,
              new Case(0, Cleanup.texts(UndecodableMarkers.crossable(markers))),
              options.lower()));
    }
  }

  /**
   * The next records of exactly [requested, captured end) per partition, at most
   * {@code maxRecords} (WIT {@code recovery-session.next-batch}); empty with {@code done} once
   * replay finished.
   *
   * @throws CleanupException {@code replay-stalled}, {@code replay-record-invalid},
   *     {@code topic-changed}, {@code kafka}; after any error, {@code invalid-argument} until the
   *     next {@link #restore}
   */
  public ReplayBatch nextBatch(int maxRecords) throws CleanupException {
    if (maxRecords < 1) {
      throw new IllegalArgumentException("maxRecords must be at least 1");
    }
    synchronized (owner) {
      long rep = representation();
      owner.host.lastPolled = 0;
      Object[] batch =
          owner.result(
              owner.host.call(CleanupWit.SESSION_NEXT_BATCH, rep, (long) maxRecords),
              v -> (Object[]) v);
      List<?> indices = (List<?>) batch[0];
      List<ReplayBatch.Record> records = new ArrayList<>(indices.size());
      if (!indices.isEmpty()) {
        if (owner.host.lastPolled == 0) {
          throw new GuestFault("next-batch returned records although it polled no consumer");
        }
        Capabilities.Consumer consumer =
            owner.host.consumers().get(owner.host.lastPolled, "consumer");
        for (Object index : indices) {
          Capabilities.PolledRecord r;
          try {
            r = consumer.polled((int) (long) (Long) index);
          } catch (IndexOutOfBoundsException e) {
            throw new GuestFault("next-batch returned index " + index + " outside the poll", e);
          }
          if (!r.hasKey() || r.keyText() == null || (r.hasValue() && r.valueText() == null)) {
            throw new GuestFault(
                "next-batch handed over the record at offset " + r.offset()
                    + " without a key or with bytes that are not UTF-8");
          }
          records.add(
              new ReplayBatch.Record(r.partition(), r.offset(), r.keyText(), r.valueText()));
        }
      }
      List<ReplayBatch.Progress> progress = new ArrayList<>();
      for (Object item : (List<?>) batch[2]) {
        Object[] p = (Object[]) item;
        progress.add(
            new ReplayBatch.Progress(
                Wit.u32AsInt(p[0], "partition"),
                Wit.u64AsLong(p[1], "position"),
                Wit.u64AsLong(p[2], "target")));
      }
      // Fresh lists that nothing else holds: wrapped, not copied (a batch has thousands).
      return new ReplayBatch(
          Collections.unmodifiableList(records),
          (Boolean) batch[1],
          Collections.unmodifiableList(progress));
    }
  }

  /**
   * The marker to store in a checkpoint taken now (WIT {@code recovery-session.snapshot-marker}).
   *
   * @throws CleanupException {@code recovery-refused} after a failed restore until one succeeds;
   *     {@code topic-changed}; {@code kafka}
   */
  public String snapshotMarker() throws CleanupException {
    synchronized (owner) {
      long rep = representation();
      return owner.result(
          owner.host.call(CleanupWit.SESSION_SNAPSHOT_MARKER, rep), v -> (String) v);
    }
  }

  /** Drops the session in the component (its consumer is closed). */
  @Override
  public void close() {
    synchronized (owner) {
      if (closed) {
        return;
      }
      closed = true;
      owner.host.dropExported("recovery", RESOURCE, handle, generation);
    }
  }
}

package io.actionstate.cleanup;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.CanonicalAbi;
import io.actionstate.cleanup.internal.GuestFault;
import io.actionstate.cleanup.internal.aot.CleanupModule;
import io.actionstate.cleanup.kafka.KafkaCapabilities;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The cleanup component ({@code cleanup.wasm}, compiled to JVM classes when this jar was built)
 * with its Kafka capabilities: apply plans with the commit-before-delete protocol, read a control
 * topic's status, and enforce committed boundaries at restore ({@link RecoverySession}). Every
 * decision, retry, wait and error sentence is the component's own, the same as in the Rust CLI
 * and the Python host; this class only moves values and runs Kafka calls.
 *
 * <p><b>Thread-safety.</b> One {@code Cleanup} holds one guest instance; its methods and those of
 * its sessions are synchronized on it, so concurrent callers wait for each other (a Flink job
 * that restores in many subtasks at once gives each its own {@code Cleanup}).
 *
 * <p><b>Lifecycle.</b> {@link #close()} drops every session, producer and consumer and closes the
 * admin client. A trap in the guest (a bug, never a verdict about input) throws the unchecked
 * {@link GuestFault}: the instance is discarded with everything it held, the sessions of that
 * instance refuse further calls, and the next call on this {@code Cleanup} runs in a fresh
 * instance.
 */
public final class Cleanup implements AutoCloseable {
  static final CleanupWit.Function MESSAGE =
      new CleanupWit.Function("plans", "message", List.of(Wit.CLEANUP_ERROR), Wit.STRING);

  final ComponentHost host;
  private final boolean ownsCapabilities;
  private boolean closed;
  /** Where {@code retrying} goes during calls other than {@code apply}. */
  private OperatorEvents events = OperatorEvents.NONE;

  private Cleanup(Capabilities capabilities, boolean owns) {
    this.host = new ComponentHost(CleanupModule.load(), CleanupModule::create, capabilities);
    this.ownsCapabilities = owns;
  }

  /**
   * A cleanup component over kafka-clients. {@code kafkaClient} holds the connection properties
   * as Kafka's Java clients take them ({@code bootstrap.servers}, {@code security.protocol},
   * {@code sasl.*}, {@code ssl.*}); {@code operationTimeout} is how long one Kafka step may take,
   * retries included (the CLI's {@code --timeout}).
   */
  public static Cleanup connect(Map<String, Object> kafkaClient, Duration operationTimeout) {
    return new Cleanup(KafkaCapabilities.connect(kafkaClient, operationTimeout), true);
  }

  /** A cleanup component over capabilities of the caller's (which the caller closes). */
  public static Cleanup withCapabilities(Capabilities capabilities) {
    return new Cleanup(Objects.requireNonNull(capabilities, "capabilities"), false);
  }

  private void open() {
    if (closed) {
      throw new IllegalStateException("this Cleanup is closed");
    }
  }

  private String message(CleanupError error) {
    return (String) host.call(MESSAGE, Wit.cleanupError(error));
  }

  private CleanupException unencodable(String what, CanonicalAbi.UnencodableStringException e) {
    CleanupError error = new CleanupError.InvalidArgument(what + ": " + e.getMessage());
    return new CleanupException(error, message(error));
  }

  /**
   * Refuses, as {@code invalid-argument} with the component's sentence, Java strings that have no
   * UTF-8 form, before anything is lowered: the instance and its sessions stay usable.
   */
  void requireUtf8(String what, String... texts) throws CleanupException {
    for (String text : texts) {
      int at = text == null ? -1 : CanonicalAbi.loneSurrogate(text);
      if (at >= 0) {
        CleanupError error =
            new CleanupError.InvalidArgument(
                what + ": the text has a lone UTF-16 surrogate at index " + at
                    + ", which is not a Unicode character");
        throw new CleanupException(error, message(error));
      }
    }
  }

  void requireUtf8(String what, List<String> texts) throws CleanupException {
    requireUtf8(what, texts.toArray(new String[0]));
  }

  private void requireUtf8(RecoveryPolicy policy) throws CleanupException {
    requireUtf8("The recovery policy", policy.topic().orElse(null), policy.controlTopic().orElse(null));
  }

  <T> T result(Object value, java.util.function.Function<Object, T> ok) throws CleanupException {
    return host.result(value, ok, this::message);
  }

  /**
   * Where {@code operator-events.retrying} goes during calls other than {@link #apply} (status,
   * recovery, markers); none by default.
   */
  public synchronized void setOperatorEvents(OperatorEvents events) {
    this.events = Objects.requireNonNull(events, "events");
    host.events = events;
  }

  /** {@link #apply(String, ApplyOptions, OperatorEvents)} without a review: it proceeds. */
  public ApplyReport apply(String planJson, ApplyOptions options) throws ApplyException {
    return apply(planJson, options, events);
  }

  /**
   * Applies a plan document (WIT {@code coordinator.apply}). {@code events} receives the review
   * right before COMMITTED is written (its answer decides), {@code committed}, and
   * {@code retrying} while a Kafka step waits for the cluster.
   *
   * @throws ApplyException the typed refusal or failure with the plan's status as the run last
   *     knew it (after COMMITTED a second apply of the same plan finishes it) and whether this run
   *     sent its COMMITTED append
   */
  public synchronized ApplyReport apply(String planJson, ApplyOptions options, OperatorEvents events)
      throws ApplyException {
    open();
    Objects.requireNonNull(planJson, "planJson");
    Objects.requireNonNull(options, "options");
    try {
      requireUtf8("The plan document or control topic", planJson, options.controlTopic());
    } catch (CleanupException refused) {
      throw ApplyException.refusedBeforeCall(refused);
    }
    host.events = Objects.requireNonNull(events, "events");
    Object value;
    try {
      value = host.call(CleanupWit.APPLY, planJson, options.lower());
    } catch (CanonicalAbi.UnencodableStringException e) {
      CleanupException refused = unencodable("The plan document or control topic", e);
      throw ApplyException.refusedBeforeCall(refused);
    } finally {
      host.events = this.events;
    }
    Case c = (Case) value;
    if (c.index() == 0) {
      return ApplyReport.from(c.payload());
    }
    // The failure carries its sentence and what the stop means: no further guest call.
    Object[] failure = (Object[]) c.payload();
    Case plan = (Case) failure[3];
    throw new ApplyException(
        Wit.cleanupError(failure[0]),
        (String) failure[4],
        ApplyReport.status(failure[1]),
        (Boolean) failure[2],
        plan.index() == 0 ? Optional.empty() : Optional.of(Wit.plan(plan.payload())),
        FailureClass.values()[((Case) failure[5]).index()]);
  }

  /**
   * What a plan would delete if it were applied now, per partition (WIT
   * {@code coordinator.preview-plan}); read-only, reads no control topic.
   *
   * @throws CleanupException {@code invalid-plan}, {@code topic-changed},
   *     {@code offsets-unavailable}, {@code kafka}
   */
  public synchronized List<ApplyReport.PartitionPreview> previewPlan(String planJson)
      throws CleanupException {
    open();
    Objects.requireNonNull(planJson, "planJson");
    requireUtf8("The plan document", planJson);
    try {
      return result(
          host.call(CleanupWit.PREVIEW_PLAN, planJson),
          v -> {
            List<ApplyReport.PartitionPreview> preview = new ArrayList<>();
            for (Object item : (List<?>) v) {
              preview.add(ApplyReport.preview(item));
            }
            return List.copyOf(preview);
          });
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The plan document", e);
    }
  }

  /**
   * Reads and validates a control topic (never creates it; WIT {@code control-status}).
   *
   * @throws CleanupException {@code recovery-refused} when it does not exist,
   *     {@code invalid-control-topic}, {@code control-topic-corrupt}, {@code kafka}
   */
  public synchronized StatusReport status(String controlTopic) throws CleanupException {
    open();
    Objects.requireNonNull(controlTopic, "controlTopic");
    requireUtf8("The control topic", controlTopic);
    try {
      return result(host.call(CleanupWit.CONTROL_STATUS, controlTopic), StatusReport::from);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The control topic", e);
    }
  }

  /**
   * Would a restore from these markers (JSON texts) be allowed now? Replays nothing (WIT
   * {@code check-recovery}).
   *
   * @throws RecoveryRefusalException the refusal; a {@code boundary-violation} names the first
   *     partition below the boundary and {@code violations()} lists every one
   */
  public synchronized RecoveryVerdict checkRecovery(List<String> markers, RecoveryPolicy policy)
      throws CleanupException {
    open();
    requireUtf8("A marker", markers);
    requireUtf8(policy);
    Object value;
    try {
      value = host.call(CleanupWit.CHECK_RECOVERY, new Case(0, texts(markers)), policy.lower());
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("A marker or topic", e);
    }
    return verdictOrRefusal(value);
  }

  /**
   * The verdict of a {@code result<recovery-verdict, recovery-refusal>} ({@code check-recovery},
   * a session's {@code restore}), or its refusal, which carries its sentence and what it means:
   * no further guest call.
   */
  static RecoveryVerdict verdictOrRefusal(Object value) throws RecoveryRefusalException {
    Case c = (Case) value;
    if (c.index() == 0) {
      return RecoveryVerdict.from(c.payload());
    }
    Object[] refusal = (Object[]) c.payload();
    CleanupError error = Wit.cleanupError(refusal[0]);
    List<CleanupError.BoundaryViolation> violations = new ArrayList<>();
    for (Object item : (List<?>) refusal[1]) {
      violations.add(Wit.boundaryViolation(item));
    }
    throw new RecoveryRefusalException(
        error,
        (String) refusal[3],
        violations,
        StatusReport.optionalString(refusal[2]),
        FailureClass.values()[((Case) refusal[4]).index()]);
  }

  /** The versioned marker of {@code topic} as of now, as compact JSON. */
  public synchronized String snapshotMarker(String topic) throws CleanupException {
    open();
    Objects.requireNonNull(topic, "topic");
    requireUtf8("The topic", topic);
    try {
      return result(host.call(CleanupWit.SNAPSHOT_MARKER, topic), v -> (String) v);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The topic", e);
    }
  }

  /** Reads snapshots through {@code store} from now on (default: {@link LocalSnapshotStore}). */
  public synchronized void setSnapshotStore(SnapshotStore store) {
    host.snapshotStore = Objects.requireNonNull(store, "store");
  }

  /**
   * The plan of a Flink checkpoint or savepoint's markers, read through this Cleanup's
   * {@link SnapshotStore} (WIT {@code snapshots.plan-snapshot}), as the Java tool's
   * {@code plan --checkpoint LOCATION --operator-uid UID} computes it: {@code location} is the
   * snapshot directory or its {@code _metadata} (a path or URI), recorded as the plan's
   * {@code sourceRecoveryPoint} unless {@code recoveryPoint} is given. Exactly one of
   * {@code operatorUid} and {@code operatorUidHash} is non-null.
   *
   * @throws CleanupException the snapshot was refused ({@code invalid-snapshot},
   *     {@code invalid-marker}, {@code invalid-argument} naming the operators present)
   * @throws SnapshotUnavailableException the store did not give one of its files
   */
  public synchronized SnapshotPlan planFromSnapshot(
      String location, String operatorUid, String operatorUidHash, String recoveryPoint)
      throws CleanupException, SnapshotUnavailableException {
    open();
    Objects.requireNonNull(location, "location");
    if ((operatorUid == null) == (operatorUidHash == null)) {
      throw new IllegalArgumentException("give exactly one of operatorUid and operatorUidHash");
    }
    requireUtf8("The snapshot location", location, recoveryPoint, operatorUid, operatorUidHash);
    Case operator = operatorUid != null ? new Case(0, operatorUid) : new Case(1, operatorUidHash);
    Object value;
    try {
      value =
          host.call(
              CleanupWit.PLAN_SNAPSHOT,
              location,
              recoveryPoint == null ? new Case(0, null) : new Case(1, recoveryPoint),
              operator);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The snapshot location", e);
    }
    Case outcome = (Case) value;
    if (outcome.index() == 0) {
      Object[] planned = (Object[]) outcome.payload();
      Object[] reads = (Object[]) planned[2];
      return new SnapshotPlan(
          Wit.plan(planned[0]), (int) (long) (Long) planned[1], (Long) reads[0], (Long) reads[1]);
    }
    throw rethrown(snapshotFailure((Case) outcome.payload()));
  }

  /** Throws {@code thrown}, one of the two exceptions a snapshot call declares. */
  private static SnapshotUnavailableException rethrown(Exception thrown) throws CleanupException {
    if (thrown instanceof CleanupException refused) {
      throw refused;
    }
    return (SnapshotUnavailableException) thrown;
  }

  /** The exception for a WIT {@code snapshot-failure}. */
  private Exception snapshotFailure(Case failure) {
    if (failure.index() == 0) {
      CleanupError error = Wit.cleanupError(failure.payload());
      return new CleanupException(error, message(error));
    }
    Object[] store = (Object[]) failure.payload();
    SnapshotStoreException.Kind reason =
        SnapshotStoreException.Kind.values()[((Case) store[1]).index()];
    return new SnapshotUnavailableException(reason, (String) store[0], (String) store[2]);
  }

  /**
   * One plan from every recovery point kept at {@code locations} (WIT {@code
   * snapshots.plan-retained}, the CLI's {@code plan --retained}), read through this Cleanup's
   * {@link SnapshotStore}: each location a Flink checkpoint directory ({@code <job-id>/chk-N} of
   * every job, or one job's), a savepoint directory (every {@code savepoint-*}) or one snapshot.
   * The plan is the per-partition minimum over every point found, less those {@code exclude}
   * names (a snapshot directory or its {@code _metadata}, as found). Exactly one of {@code
   * operatorUid} and {@code operatorUidHash} is non-null.
   *
   * @throws CleanupException nothing to plan ({@code invalid-argument}: a location not there or
   *     holding no snapshot, every point excluded), points that disagree, or a point that cannot
   *     be planned (its message names the point: every point must be plannable, since any may be
   *     restored)
   * @throws SnapshotUnavailableException a location could not be listed, or a point's file not read
   */
  public synchronized RetainedPlan planRetained(
      List<String> locations, String operatorUid, String operatorUidHash, List<String> exclude)
      throws CleanupException, SnapshotUnavailableException {
    open();
    Objects.requireNonNull(locations, "locations");
    Objects.requireNonNull(exclude, "exclude");
    if ((operatorUid == null) == (operatorUidHash == null)) {
      throw new IllegalArgumentException("give exactly one of operatorUid and operatorUidHash");
    }
    requireUtf8("The operator", operatorUid, operatorUidHash);
    for (String location : locations) {
      requireUtf8("The retained location", location);
    }
    for (String location : exclude) {
      requireUtf8("The excluded snapshot", location);
    }
    Case operator = operatorUid != null ? new Case(0, operatorUid) : new Case(1, operatorUidHash);
    Case outcome;
    try {
      outcome =
          (Case)
              host.call(
                  CleanupWit.PLAN_RETAINED,
                  new ArrayList<Object>(locations),
                  new ArrayList<Object>(exclude),
                  operator);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The retained location", e);
    }
    if (outcome.index() == 0) {
      return retainedPlan((Object[]) outcome.payload());
    }
    Case failure = (Case) outcome.payload();
    Exception thrown;
    if (failure.index() == 2) {
      Object[] point = (Object[]) failure.payload();
      Exception cause = snapshotFailure((Case) point[1]);
      if (cause instanceof CleanupException refused) {
        thrown =
            new CleanupException(
                refused.error(),
                "retained recovery point " + point[0] + ": " + refused.getMessage());
      } else {
        thrown = cause;
      }
    } else {
      thrown = snapshotFailure(failure);
    }
    throw rethrown(thrown);
  }

  private static RetainedPlan retainedPlan(Object[] f) {
    List<RetainedPlan.Point> points = new ArrayList<>();
    for (Object item : (List<?>) f[1]) {
      Object[] point = (Object[]) item;
      points.add(new RetainedPlan.Point((String) point[0], Wit.offsets(point[1])));
    }
    java.util.SortedMap<Integer, RetainedPlan.Bound> bounds = new java.util.TreeMap<>();
    for (Object item : (List<?>) f[2]) {
      Object[] bound = (Object[]) item;
      List<String> holders = new ArrayList<>();
      for (Object index : (List<?>) bound[2]) {
        holders.add(points.get((int) (long) (Long) index).location());
      }
      bounds.put(
          (int) (long) (Long) bound[0], new RetainedPlan.Bound((Long) bound[1], List.copyOf(holders)));
    }
    Object[] reads = (Object[]) f[8];
    return new RetainedPlan(
        Wit.plan(f[0]),
        List.copyOf(points),
        java.util.Collections.unmodifiableSortedMap(bounds),
        points.get((int) (long) (Long) f[3]).location(),
        (Boolean) f[4],
        strings(f[5]),
        strings(f[6]),
        strings(f[7]),
        (Long) reads[0],
        (Long) reads[1]);
  }

  private static List<String> strings(Object value) {
    List<String> out = new ArrayList<>();
    for (Object item : (List<?>) value) {
      out.add((String) item);
    }
    return List.copyOf(out);
  }

  /**
   * Starts a recovery session for {@code topic} and records its identity (WIT
   * {@code recovery-session.start}).
   *
   * @throws CleanupException {@code invalid-argument} when the topic does not exist,
   *     {@code conflicting-policies}, {@code kafka}
   */
  public synchronized RecoverySession startRecovery(String topic, RecoveryPolicy policy)
      throws CleanupException {
    open();
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(policy, "policy");
    requireUtf8("The topic", topic);
    requireUtf8(policy);
    try {
      long handle =
          result(host.call(CleanupWit.SESSION_START, topic, policy.lower()), v -> (Long) v);
      return new RecoverySession(this, handle, host.generation());
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The topic", e);
    }
  }

  /**
   * Plans from marker files handed over one at a time (WIT {@code marker-planning}): each text is
   * planned and freed by its call, so the guest holds one file at a time.
   */
  public synchronized MarkerFilesPlanner planMarkerFiles(String recoveryPoint)
      throws CleanupException {
    open();
    Objects.requireNonNull(recoveryPoint, "recoveryPoint");
    requireUtf8("The recovery point", recoveryPoint);
    long handle = (Long) host.call(CleanupWit.PLANNER_NEW, recoveryPoint);
    return new MarkerFilesPlanner(this, handle, host.generation());
  }

  static List<Object> texts(List<String> markers) {
    List<Object> texts = new ArrayList<>(markers.size());
    for (String m : markers) {
      texts.add(Objects.requireNonNull(m, "marker"));
    }
    return texts;
  }

  void checkOpen() {
    open();
  }

  /** Drops every session, producer and consumer, and closes the admin client if it made it. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    host.close();
    if (ownsCapabilities) {
      host.capabilities.admin().close();
    }
  }
}

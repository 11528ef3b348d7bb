"""`Cleanup`: the cleanup component in wasmtime with Kafka capabilities for one cluster and control
topic; every public method is one guest call (or a few) and a translation of its values."""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from wasmtime import WasmtimeError

from . import _component, _convert as convert, errors
from ._component import ComponentInstance, HostState, ResourceAny, Trap, Variant, build_linker, field, record
from ._kafka_config import KafkaCapabilities
from ._session import RecoverySession
from .errors import CleanupError, InternalError
from .model import (
    ApplyReport,
    ControlEntry,
    LivePartition,
    Offsets,
    Operation,
    PartitionPreview,
    Plan,
    PlanTimes,
    RequestCounts,
    RetainedPlan,
    RetainedPoint,
    StatusReport,
    Verdict,
)

BeforeCommit = Callable[[str, List[PartitionPreview]], None]


class _Configured:
    """The default of `Cleanup.recovery_session(control_topic=...)`: this Cleanup's control topic."""

    def __repr__(self) -> str:
        return "<the Cleanup's control topic>"


_CONFIGURED: Any = _Configured()


class Cleanup:
    """The cleanup component with Kafka capabilities for one cluster and control topic.

    `bootstrap_servers` and any librdkafka property (`**kafka_config`, SASL/SSL included) configure
    the Kafka clients; without bootstrap servers only the offline functions (`plan`, `verify`,
    `render`, `replay_control_log`, `effective_boundary`) work, and Kafka calls fail as
    `KafkaFailure`. `timeout` bounds each Kafka request (seconds). `on_before_commit(plan_id,
    preview)` is called once per apply after every check passed, right before COMMITTED is
    written; returning False declines (the apply returns outcome "declined", nothing committed),
    raising from it aborts the apply with nothing durable done. Not thread-safe: use
    one `Cleanup` per thread.
    """

    def __init__(
        self,
        bootstrap_servers: Optional[str] = None,
        control_topic: Optional[str] = None,
        *,
        timeout: float = 30.0,
        on_before_commit: Optional[BeforeCommit] = None,
        component: Optional[Union[str, Path]] = None,
        **kafka_config: Any,
    ) -> None:
        properties = convert.kafka_properties(bootstrap_servers, kafka_config)
        self.control_topic = control_topic
        self.kafka: Optional[KafkaCapabilities] = (
            KafkaCapabilities(properties, timeout) if properties.get("bootstrap.servers") else None
        )
        self.on_before_commit = on_before_commit
        #: The preview of the last apply that reached the commit point (plan ID, partitions).
        self.last_preview: Optional[tuple] = None
        self._loaded = _component.loaded(Path(component) if component is not None else None)
        self._host = HostState(self.kafka, self._before_commit)
        self._linker = build_linker(self._loaded.engine, self._host)
        self._instance: Optional[ComponentInstance] = None
        #: Why the last instance was discarded (what a lost session reports).
        self._lost_reason = ""
        self._sessions: "weakref.WeakSet[RecoverySession]" = weakref.WeakSet()
        self._orphans: List[Tuple[ComponentInstance, ResourceAny]] = []

    # --- plumbing ------------------------------------------------------------------------------

    def _before_commit(self, plan_id: str, preview: List[Any]) -> bool:
        rows = [convert.preview_of(p) for p in preview]
        self.last_preview = (plan_id, rows)
        if self.on_before_commit is not None:
            return self.on_before_commit(plan_id, rows) is not False
        return True

    def _current_instance(self) -> ComponentInstance:
        if self._instance is None:
            try:
                self._instance = ComponentInstance(self._loaded, self._linker)
            except WasmtimeError as e:
                # E.g. a component built from a WIT whose imports this host does not provide.
                raise InternalError("internal", f"cannot instantiate the cleanup component {self._loaded.path}: {e}") from e
        return self._instance

    def _call(self, iface: str, name: str, *args: Any) -> Any:
        instance = self._current_instance()
        return self._run(instance, lambda: instance.call(iface, name, *args))

    def _run(self, instance: ComponentInstance, action: Callable[[], Any]) -> Any:
        """Runs one guest call on `instance` (the current one). A trap discards the instance and
        is an `InternalError`; an exception from the embedder's callback inside a guest call
        discards it too and propagates."""
        self._host.control_topic = self.control_topic
        try:
            self._drop_orphans(instance)
            value = action()
        except Trap as trap:
            self._discard(f"the component trapped ({trap})")
            raise InternalError("internal", f"internal error in the cleanup component: {trap}") from trap
        except BaseException as e:
            # The embedder's callback raised inside a guest call: the instance is poisoned.
            self._discard(f"{type(e).__name__} was raised inside a guest call")
            raise
        if self._host.interrupted is not None:
            # A KeyboardInterrupt inside a capability: the guest saw a kafka-error and returned
            # normally, so the instance (and any recovery session in it) stays usable.
            interrupt, self._host.interrupted = self._host.interrupted, None
            raise interrupt
        return value

    def _discard(self, reason: str) -> None:
        """Forgets the instance: its sessions are lost, the consumers it owned are closed."""
        self._instance = None
        self._lost_reason = reason
        self._orphans.clear()
        self._host.close_resources()

    def _orphan(self, instance: ComponentInstance, handle: ResourceAny) -> None:
        # Called by a session's finalizer (possibly in the middle of a guest call): only queue.
        self._orphans.append((instance, handle))

    def _drop_orphans(self, instance: ComponentInstance) -> None:
        """Drops the guest resources of sessions that were garbage-collected without `close`,
        between guest calls of the instance that owns them."""
        while self._orphans:
            owner, handle = self._orphans.pop()
            if owner is instance:
                instance.drop(handle)

    def _answer(self, outcome: Any) -> Any:
        """The ok value of a `result<_, cleanup-error>`, or the matching exception."""
        tag, value = outcome
        if tag == "ok":
            return value
        raise self._error(value)

    def _error(self, value: Any, message: Optional[str] = None) -> CleanupError:
        """The exception of a `cleanup-error` value, with the component's own sentence: the one
        a failure record carries, else asked of `plans.message`."""
        if message is None:
            message = self._call("plans", "message", value)
        return errors.from_component(value.tag, convert.plain(value.payload), message)

    @property
    def requests(self) -> RequestCounts:
        """Capability calls made so far (each admin call is one broker request)."""
        return self.kafka.counts if self.kafka is not None else RequestCounts()

    def close(self) -> None:
        """Closes every open recovery session, the component instance and the Kafka clients.
        The object stays usable: the next call starts afresh."""
        try:
            for session in list(self._sessions):
                session.close()
        finally:
            self._instance = None
            self._orphans.clear()
            self._host.close_resources()
            if self.kafka is not None:
                self.kafka.close()

    def __enter__(self) -> "Cleanup":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    # --- offline: plans, markers, control logs -----------------------------------------------

    def plan(self, recovery_point: str, markers: Iterable[Union[str, bytes]]) -> Plan:
        """The plan of one recovery point from its subtask markers (JSON texts)."""
        return convert.plan_of(self._answer(self._call("plans", "plan-from-markers", recovery_point, convert.texts(markers, "markers"))))

    def plan_from_snapshot(
        self,
        path: Union[str, "os.PathLike[str]"],
        operator_uid: Optional[str] = None,
        operator_uid_hash: Optional[str] = None,
        recovery_point: Optional[str] = None,
    ) -> Plan:
        """The plan of a Flink checkpoint or savepoint, read straight from its files (the Java
        tool's `plan --checkpoint PATH --operator-uid UID`, no JVM): `path` is the snapshot
        directory or its `_metadata`, a local path or a URI (``s3://…``: read through fsspec),
        and becomes the plan's `sourceRecoveryPoint` as given unless `recovery_point` names the
        original location of a copied snapshot. Raises `SnapshotUnavailable` for a file the store
        did not give.
        Give exactly one of `operator_uid` and `operator_uid_hash`. Raises `InvalidSnapshot` for
        a file that cannot be read, `InvalidMarker` with the Java tool's facts, `InvalidArgument`
        for an operator that is not there (the message lists those that are)."""
        if (operator_uid is None) == (operator_uid_hash is None):
            raise TypeError("give exactly one of operator_uid and operator_uid_hash")
        operator = Variant("uid", operator_uid) if operator_uid is not None else Variant("uid-hash", operator_uid_hash)
        planned = self._snapshot_answer(self._call("snapshots", "plan-snapshot", os.fspath(path), recovery_point, operator))
        return convert.plan_of(planned.plan)

    def plan_retained(
        self,
        locations: Iterable[Union[str, "os.PathLike[str]"]],
        operator_uid: Optional[str] = None,
        operator_uid_hash: Optional[str] = None,
        exclude: Iterable[Union[str, "os.PathLike[str]"]] = (),
    ) -> RetainedPlan:
        """One plan from every recovery point kept at `locations` (the CLI's `plan --retained`):
        each a Flink checkpoint directory (`<job-id>/chk-N` of every job, or one job's), a
        savepoint directory (every `savepoint-*`) or one snapshot, local or a URI (read through
        fsspec). The plan is the per-partition minimum over every point found, less those
        `exclude` names (a snapshot directory or its `_metadata`, as found). Raises
        `InvalidArgument` when there is nothing to plan, `SnapshotUnavailable` for a location
        that could not be listed, and, for a point that cannot be planned, that point's error
        with `location` set to it: every point must be plannable, since any may be restored."""
        if (operator_uid is None) == (operator_uid_hash is None):
            raise TypeError("give exactly one of operator_uid and operator_uid_hash")
        operator = Variant("uid", operator_uid) if operator_uid is not None else Variant("uid-hash", operator_uid_hash)
        where = [os.fspath(location) for location in locations]
        left_out = [os.fspath(location) for location in exclude]
        tag, value = self._call("snapshots", "plan-retained", where, left_out, operator)
        if tag != "ok":
            self._retained_failure(value)
        points = [RetainedPoint(p.location, convert.offsets_of(p.offsets)) for p in value.points]
        return RetainedPlan(
            plan=convert.plan_of(value.plan),
            points=points,
            bounded_by={b.partition: (b.offset, [points[i].location for i in b.points]) for b in value.bounds},
            recorded=points[value.recorded].location,
            bounds_every_partition=field(value, "bounds_every_partition"),
            incomplete=list(value.incomplete),
            excluded=list(value.excluded),
            unmatched_exclusions=list(field(value, "unmatched_exclusions")),
        )

    def _retained_failure(self, failure: Any) -> None:
        """Raises the exception for a `retained-failure`."""
        case = failure.tag if isinstance(failure, Variant) and failure.tag in ("refused", "store", "point") else None
        payload = failure.payload if case else failure
        if case == "refused" or (case is None and isinstance(payload, Variant)):
            raise self._error(payload)
        if case == "point" or hasattr(payload, "failure"):
            try:
                self._snapshot_answer(("err", payload.failure))
            except errors.CleanupError as error:
                error.location = payload.location
                raise
        self._snapshot_answer(("err", payload))

    def inspect_snapshot(self, path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
        """What a Flink checkpoint or savepoint holds, as plain data: the WIT
        `snapshot-summary` with snake_case keys (`format_version`, `checkpoint_id`, `operators`,
        each with `id`, `uid`, `name`, `parallelism`, `operator_states`, `keyed_state`,
        `channel_state`, and `markers` for the operators that keep recovery markers)."""
        return convert.snake(self._snapshot_answer(self._call("snapshots", "inspect", os.fspath(path))))

    def _snapshot_answer(self, outcome: Any) -> Any:
        """The ok value of a `result<_, snapshot-failure>`, or the matching exception."""
        tag, value = outcome
        if tag == "ok":
            return value
        # `snapshot-failure`'s cases hold a variant and a record, so the value arrives untagged.
        if isinstance(value, Variant):
            raise self._error(value)
        failure = value
        error = errors.SnapshotUnavailable("snapshot-store", failure.message, convert.plain(failure.error.payload))
        error.reason = failure.error.tag
        error.location = failure.location
        raise error

    def split_markers(self, text: Union[str, bytes]) -> List[str]:
        """The exact text of each marker in a marker file's text: a JSON array gives its
        elements (a string element the marker text it holds), markers one per line give each,
        any other text is one marker. The same rules as the CLI's `--markers` files."""
        (text,) = convert.texts([text], "text")
        return list(self._answer(self._call("plans", "split-markers", text)))

    def verify(self, plan_json: Union[str, bytes]) -> Plan:
        """Parses a plan document strictly and verifies its ID."""
        (text,) = convert.texts([plan_json], "plan_json")
        return convert.plan_of(self._answer(self._call("plans", "verify-plan", text)))

    def render(self, plan: Plan) -> str:
        """The plan file form (Java-compatible pretty JSON, one trailing LF)."""
        return self._call("plans", "render-plan", convert.plan_record(plan))

    def replay_control_log(self, entries: Iterable[Union[ControlEntry, tuple]]) -> List[Operation]:
        """Replays control-topic records (offset, key, value) with every integrity rule."""
        values = []
        for entry in entries:
            offset, key, value = (entry.offset, entry.key, entry.value) if isinstance(entry, ControlEntry) else entry
            values.append(record(offset=int(offset), key=key, value=value))
        return [convert.operation_of(r) for r in self._answer(self._call("plans", "replay-control-log", values))]

    def effective_boundary(self, plans: Iterable[Plan]) -> Offsets:
        """The per-partition maximum over `plans`."""
        return convert.offsets_of(self._answer(self._call("plans", "effective-boundary", [convert.plan_record(p) for p in plans])))

    # --- Kafka: apply, status, recovery ------------------------------------------------------

    def apply(
        self,
        plan_json: Union[str, bytes],
        replication_factor: Optional[int] = None,
        dry_run: bool = False,
        start_new_history: bool = False,
    ) -> ApplyReport:
        """Applies a plan document with the commit-before-delete protocol (SPEC §5).
        `replication_factor` is used only if the control topic must be created; None (the
        default) lets the component choose the production default from the cluster (3, or the
        broker count when there are fewer, whatever the brokers' default.replication.factor
        says; min.insync.replicas 2 from 3 replicas on). A control topic with fewer replicas than that default is reported
        in `ApplyReport.warnings`, never refused. `start_new_history` allows creating a missing
        control topic for a data topic that was already cleaned (refused otherwise: its history
        is in another control topic)."""
        (text,) = convert.texts([plan_json], "plan_json")
        options = record(
            control_topic=self.control_topic or "",
            replication_factor=None if replication_factor is None else convert.u16(replication_factor, "replication_factor"),
            dry_run=bool(dry_run),
            start_new_history=bool(start_new_history),
        )
        before = self.requests
        tag, value = self._call("coordinator", "apply", text, options)
        if tag == "err":
            # An apply-failure carries everything: the error, its sentence, what the stop means,
            # the plan's status as the run last knew it. No further call.
            error = self._error(value.error, value.message)
            error.status = convert.status_name(value.status)
            error.commit_attempted = bool(field(value, "commit_attempted"))
            error.failure_class = field(value, "class")
            plan = value.plan
            error.plan_id = None if plan is None else field(plan, "plan_id")
            raise error
        return ApplyReport(
            plan_id=field(value, "plan_id"),
            outcome=value.outcome,
            status=convert.status_name(value.status),
            preview=[convert.preview_of(p) for p in value.preview],
            target=convert.offsets_of(value.target),
            beginnings_after=convert.offsets_of(field(value, "beginnings_after")),
            marked_applied=list(field(value, "marked_applied")),
            requests=self.requests - before,
            created_control_topic=convert.new_control_topic_of(field(value, "created_control_topic")),
            warnings=[convert.warning_of(w) for w in value.warnings],
        )

    def status(self) -> StatusReport:
        """The control topic's plans, effective boundary and the live data topic."""
        value = self._answer(self._call("coordinator", "control-status", self.control_topic or ""))
        return StatusReport(
            control_topic=field(value, "control_topic"),
            operations=[convert.operation_of(r) for r in value.operations],
            boundary=convert.offsets_of(value.boundary),
            topic=value.topic,
            topic_id=field(value, "topic_id"),
            live_topic_id=field(value, "live_topic_id"),
            live=[LivePartition(l.partition, l.beginning, l.end, l.boundary) for l in value.live],
            broken_history=field(value, "broken_history"),
            times=[PlanTimes(field(t, "committed_at"), field(t, "applied_at")) for t in value.times],
            boundary_origins={o.partition: field(o, "plan_id") for o in field(value, "boundary_origins")},
        )

    def check_recovery(self, markers: Iterable[Union[str, bytes]], topic: Optional[str] = None, tombstones: bool = False) -> Verdict:
        """Would a restore from these markers be allowed now (SPEC §6)? Returns the verdict or
        raises the refusal (e.g. `BoundaryViolation`). Enforcement uses this object's control
        topic; without one it is standard recovery."""
        policy = record(topic=topic, control_topic=self.control_topic, tombstones_enabled=bool(tombstones))
        source = Variant("texts", convert.texts(markers, "markers"))
        tag, value = self._call("recovery", "check-recovery", source, policy)
        if tag == "err":
            raise self._refused(value)
        return convert.verdict_of(value)

    def _refused(self, refusal: Any) -> CleanupError:
        """The exception of a `recovery-refusal` (check-recovery's, or a session's restore's),
        which carries everything: the error, its sentence, what it means ("restore-refused",
        "refused" or "failed"), every partition below the boundary and who committed it."""
        error = self._error(refusal.error, refusal.message)
        error.failure_class = field(refusal, "class")
        error.violations = [convert.plain(v) for v in refusal.violations]
        error.hint = field(refusal, "hint")
        return error

    def recovery_session(self, topic: str, *, control_topic: Optional[str] = _CONFIGURED, tombstones: bool = False) -> "RecoverySession":
        """Starts a runtime's recovery of `topic` (the WIT `recovery-session` resource): the
        component records the topic's identity now, and every later restore, batch and
        checkpoint marker of the session is checked against it.

        `control_topic` defaults to this Cleanup's; pass None for standard recovery (no
        boundary enforced). `tombstones` says whether the runtime has per-key tombstones
        enabled (refused together with a control topic: `ConflictingPolicies`). Raises
        `InvalidArgument` when the topic does not exist. Close the session (or use it as a
        context manager) to release its consumer; `Cleanup.close` closes any still open."""
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, got {type(topic).__name__}")
        control = self.control_topic if control_topic is _CONFIGURED else control_topic
        if control is not None and not isinstance(control, str):
            raise TypeError(f"control_topic must be a str or None, got {type(control).__name__}")
        policy = record(topic=topic, control_topic=control, tombstones_enabled=bool(tombstones))
        instance = self._current_instance()
        handle = self._answer(self._run(instance, lambda: instance.call("recovery", "[static]recovery-session.start", topic, policy)))
        session = RecoverySession(self, instance, handle, topic, control, bool(tombstones))
        self._sessions.add(session)
        return session

    def snapshot_marker(self, topic: str) -> str:
        """The versioned recovery marker of `topic` as of now (compact JSON)."""
        return self._answer(self._call("recovery", "snapshot-marker", topic))

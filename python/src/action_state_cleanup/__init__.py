"""Checkpoint-aligned, crash-safe cleanup of Kafka action-state topics, from Python.

The safety logic is the project's WebAssembly component (`cleanup.wasm`, shipped inside this
package) running in wasmtime; this package only supplies its Kafka capabilities over
confluent-kafka and translates values. Example::

    from action_state_cleanup import Cleanup, BoundaryViolation

    cleanup = Cleanup("127.0.0.1:9092", "jobs-cleanup")
    plan = cleanup.plan("C1", markers)             # markers: JSON texts of one recovery point
    report = cleanup.apply(cleanup.render(plan))   # commit, delete, verify, mark APPLIED
    try:
        cleanup.check_recovery(c0_markers)
    except BoundaryViolation as refused:
        print(refused.partition, refused.requested, refused.boundary)

    with cleanup.recovery_session("orders") as session:   # a runtime's restore + replay
        verdict = session.restore(c1_markers)
        for batch in session.replay(max_records=5000):    # one guest call per batch
            for record in batch:                          # value None: a tombstone
                state[record.key] = record.value
        marker = session.snapshot_marker()                # for the next checkpoint
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from wasmtime import WasmtimeError

from . import _component, _values, errors
from ._component import ComponentInstance, HostState, Record, ResourceAny, Trap, Variant, build_linker, field, record
from ._kafka_config import KafkaCapabilities, kafka_uuid, transactional_id
from ._kafka_consumer import Consumer as ReplayConsumer
from ._kafka_errors import AppendFenced, CapabilityError
from ._kafka_writer import Writer as FencedWriter
from .errors import (
    BoundaryRegression,
    BoundaryViolation,
    CleanupError,
    ConflictingPolicies,
    ControlTopicCorrupt,
    DeleteUnverified,
    Fenced,
    InternalError,
    InvalidArgument,
    InvalidControlTopic,
    InvalidMarker,
    InvalidPlan,
    InvalidSnapshot,
    KafkaFailure,
    OffsetsUnavailable,
    RecoveryRefused,
    ReplayRecordInvalid,
    ReplayStalled,
    TopicChanged,
    UnsafeTopicConfig,
)
from .model import (
    ApplyReport,
    ApplyWarning,
    ControlEntry,
    ControlTopicReplication,
    LivePartition,
    NewControlTopic,
    Offsets,
    Operation,
    PartitionPreview,
    PartitionProgress,
    PartitionRange,
    Plan,
    ReplayBatch,
    ReplayedRecord,
    RequestCounts,
    StatusReport,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "Cleanup",
    "RecoverySession",
    "ReplayBatch",
    "ReplayedRecord",
    "PartitionProgress",
    "Plan",
    "ApplyReport",
    "ApplyWarning",
    "ControlTopicReplication",
    "StatusReport",
    "Verdict",
    "Operation",
    "LivePartition",
    "NewControlTopic",
    "PartitionPreview",
    "PartitionRange",
    "RequestCounts",
    "ControlEntry",
    "CleanupError",
    "InvalidPlan",
    "InvalidMarker",
    "InvalidSnapshot",
    "InvalidArgument",
    "BoundaryViolation",
    "BoundaryRegression",
    "TopicChanged",
    "UnsafeTopicConfig",
    "InvalidControlTopic",
    "OffsetsUnavailable",
    "DeleteUnverified",
    "ControlTopicCorrupt",
    "RecoveryRefused",
    "ConflictingPolicies",
    "Fenced",
    "ReplayStalled",
    "ReplayRecordInvalid",
    "KafkaFailure",
    "InternalError",
    "KafkaCapabilities",
    "CapabilityError",
    "AppendFenced",
    "FencedWriter",
    "transactional_id",
    "ReplayConsumer",
    "kafka_uuid",
    "component_path",
]

BeforeCommit = Callable[[str, List[PartitionPreview]], None]


def component_path() -> Path:
    """Where the bundled cleanup component lives."""
    return _component.bundled_component_path()


def _kafka_properties(bootstrap_servers: Optional[str], kafka_config: Dict[str, Any]) -> Dict[str, str]:
    """librdkafka properties: keys as librdkafka spells them (`security.protocol`), or as Python
    keywords without dots (`security_protocol`). `bootstrap_servers` wins over the mapping."""
    properties: Dict[str, str] = {}
    for key, value in kafka_config.items():
        name = key if "." in key else key.replace("_", ".")
        properties[name] = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if bootstrap_servers:
        properties["bootstrap.servers"] = bootstrap_servers
    return properties


# --- WIT values <-> dataclasses ------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A lifted WIT value as plain Python (records become dicts keyed by WIT field names)."""
    if isinstance(value, _component.Record):
        return {name: _plain(v) for name, v in vars(value).items()}
    if isinstance(value, (list, _values.RecordColumns)):
        return [_plain(v) for v in value]
    if isinstance(value, _component.Variant):
        return {"tag": value.tag, "payload": _plain(value.payload)}
    return value


def _offsets(values: Sequence[Any]) -> Offsets:
    return dict(_values.pairs(values, "partition", "offset"))


def _offset_records(offsets: Offsets) -> Any:
    partitions, values = list(map(int, offsets.keys())), list(map(int, offsets.values()))
    if _values.installed():
        # Columns, not one Record per partition: lowered without a Python object per record.
        return _values.RecordColumns(("partition", "offset"), (partitions, values))
    return [record(partition=p, offset=o) for p, o in zip(partitions, values)]


def _snake(value: Any) -> Any:
    """A WIT value as plain Python data: records become dicts with snake_case keys."""
    if isinstance(value, Record):
        return {name.replace("-", "_"): _snake(item) for name, item in vars(value).items()}
    if isinstance(value, (list, tuple, _values.RecordColumns)):
        return [_snake(item) for item in value]
    return value


def _read_snapshot(path: Union[str, "os.PathLike[str]"]) -> Tuple[str, str, bytes]:
    """The snapshot as given (its directory or `_metadata`), its directory, `_metadata`'s bytes."""
    location = os.fspath(path)
    if os.path.isdir(location):
        directory, metadata_path = location, os.path.join(location, "_metadata")
    else:
        directory, metadata_path = os.path.dirname(location) or ".", location
    with open(metadata_path, "rb") as handle:
        return location, directory, handle.read()


def _plan(value: Any) -> Plan:
    return Plan(
        schema_version=field(value, "schema_version"),
        plan_id=field(value, "plan_id"),
        source_recovery_point=field(value, "source_recovery_point"),
        topic=value.topic,
        topic_id=field(value, "topic_id"),
        offsets=_offsets(value.offsets),
    )


def _plan_record(plan: Plan) -> Any:
    return record(
        schema_version=plan.schema_version,
        plan_id=plan.plan_id,
        source_recovery_point=plan.source_recovery_point,
        topic=plan.topic,
        topic_id=plan.topic_id,
        offsets=_offset_records(plan.offsets),
    )


_STATUS = {"committed": "COMMITTED", "applied": "APPLIED"}


def _status(value: Optional[str]) -> Optional[str]:
    return None if value is None else _STATUS[value]


def _preview(value: Any) -> PartitionPreview:
    return PartitionPreview(value.partition, value.beginning, value.boundary, value.end, field(value, "records_to_delete"))


def _new_control_topic(value: Any) -> Optional[NewControlTopic]:
    if value is None:
        return None
    return NewControlTopic(
        value.name, value.partitions, field(value, "replication_factor"), field(value, "min_insync_replicas")
    )


def _warning(value: Any) -> ApplyWarning:
    """WIT `apply-warning`. Its two cases carry a record and a string, which wasmtime-py tells
    apart without a tag ("untagged"): it hands over the payload itself (a tagged `Variant` is
    accepted too)."""
    if isinstance(value, Variant):
        tag, payload = value.tag, value.payload
    else:
        tag = "replication-unchecked" if isinstance(value, str) else "under-replicated-control-topic"
        payload = value
    if tag == "replication-unchecked":
        return ApplyWarning(tag, payload)
    replication = ControlTopicReplication(
        field(payload, "control_topic"),
        field(payload, "replication_factor"),
        field(payload, "recommended_replication_factor"),
        field(payload, "recommended_min_insync_replicas"),
        field(payload, "broker_count"),
        field(payload, "cluster_default_replication_factor"),
        payload.reassignment,
    )
    return ApplyWarning(tag, payload.message, replication)


def _operation(value: Any) -> Operation:
    return Operation(plan=_plan(value.plan), status=_STATUS[value.status])


def _verdict(value: Any) -> Verdict:
    return Verdict(
        topic=value.topic,
        boundary=None if value.boundary is None else _offsets(value.boundary),
        versioned=value.versioned,
        ranges=[PartitionRange(r.partition, r.requested, r.beginning, r.end) for r in value.ranges],
    )


_U32_MAX = 2**32 - 1


def _u32(value: int, what: str) -> int:
    """A WIT u32 argument: range-checked here, because a value wasmtime-py cannot lower would
    fail inside the call; what the component accepts (e.g. 0) is its own decision."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"{what} must be in [0, {_U32_MAX}], got {value}")
    return value


def _u16(value: int, what: str) -> int:
    """A WIT u16 argument, range-checked like `_u32` (the component refuses 0 and anything above
    32767 itself, with its own message)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"{what} must be in [0, 65535], got {value}")
    return value


class _Configured:
    """The default of `Cleanup.recovery_session(control_topic=...)`: this Cleanup's control topic."""

    def __repr__(self) -> str:
        return "<the Cleanup's control topic>"


_CONFIGURED: Any = _Configured()


def _texts(items: Iterable[Union[str, bytes]], what: str) -> List[str]:
    texts = []
    for item in items:
        if isinstance(item, bytes):
            item = item.decode("utf-8")
        if not isinstance(item, str):
            raise TypeError(f"{what} must be JSON texts (str), got {type(item).__name__}")
        texts.append(item)
    return texts


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
        properties = _kafka_properties(bootstrap_servers, kafka_config)
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
        rows = [_preview(p) for p in preview]
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

    def _error(self, value: Any) -> CleanupError:
        """The exception of a `cleanup-error` value, with the component's own sentence."""
        message = self._call("plans", "message", value)
        return errors.from_component(value.tag, _plain(value.payload), message)

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
        return _plan(self._answer(self._call("plans", "plan-from-markers", recovery_point, _texts(markers, "markers"))))

    def plan_from_snapshot(
        self,
        path: Union[str, "os.PathLike[str]"],
        operator_uid: Optional[str] = None,
        operator_uid_hash: Optional[str] = None,
    ) -> Plan:
        """The plan of a Flink checkpoint or savepoint, read straight from its files (the Java
        tool's `plan --checkpoint PATH --operator-uid UID`, no JVM): `path` is the snapshot
        directory or its `_metadata`, and becomes the plan's `sourceRecoveryPoint` as given.
        Give exactly one of `operator_uid` and `operator_uid_hash`. Raises `InvalidSnapshot` for
        a file that cannot be read, `InvalidMarker` with the Java tool's facts, `InvalidArgument`
        for an operator that is not there (the message lists those that are)."""
        if (operator_uid is None) == (operator_uid_hash is None):
            raise TypeError("give exactly one of operator_uid and operator_uid_hash")
        operator = Variant("uid", operator_uid) if operator_uid is not None else Variant("uid-hash", operator_uid_hash)
        location, directory, metadata = _read_snapshot(path)
        files = self._snapshot_files(location, directory, metadata, operator)
        source = Variant("snapshot", record(metadata=metadata, operator=operator, files=files))
        planned = self._answer(self._call("plans", "compute-plan", location, source))
        return _plan(planned.plan)

    def inspect_snapshot(self, path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
        """What a Flink checkpoint or savepoint holds, as plain data: the WIT
        `snapshot-summary` with snake_case keys (`format_version`, `checkpoint_id`, `operators`,
        each with `id`, `uid`, `name`, `parallelism`, `operator_states`, `keyed_state`,
        `channel_state`, and `markers` for the operators that keep recovery markers)."""
        location, directory, metadata = _read_snapshot(path)
        files = self._snapshot_files(location, directory, metadata, None)
        return _snake(self._answer(self._call("plans", "inspect-snapshot", location, metadata, files)))

    def _snapshot_files(self, location: str, directory: str, metadata: bytes, operator: Any) -> List[Any]:
        """Reads the state files the component asks for: this host only reads bytes."""
        needed = self._answer(self._call("plans", "snapshot-files", location, metadata, operator))
        files = []
        for file in needed:
            path = file.path if file.path.startswith("/") else os.path.join(directory, file.path)
            with open(path, "rb") as handle:
                files.append(record(path=file.path, bytes=handle.read()))
        return files

    def split_markers(self, text: Union[str, bytes]) -> List[str]:
        """The exact text of each marker in a marker file's text: a JSON array gives its
        elements (a string element the marker text it holds), markers one per line give each,
        any other text is one marker. The same rules as the CLI's `--markers` files."""
        (text,) = _texts([text], "text")
        return list(self._answer(self._call("plans", "split-markers", text)))

    def verify(self, plan_json: Union[str, bytes]) -> Plan:
        """Parses a plan document strictly and verifies its ID."""
        (text,) = _texts([plan_json], "plan_json")
        return _plan(self._answer(self._call("plans", "verify-plan", text)))

    def render(self, plan: Plan) -> str:
        """The plan file form (Java-compatible pretty JSON, one trailing LF)."""
        return self._call("plans", "render-plan", _plan_record(plan))

    def replay_control_log(self, entries: Iterable[Union[ControlEntry, tuple]]) -> List[Operation]:
        """Replays control-topic records (offset, key, value) with every integrity rule."""
        values = []
        for entry in entries:
            offset, key, value = (entry.offset, entry.key, entry.value) if isinstance(entry, ControlEntry) else entry
            values.append(record(offset=int(offset), key=key, value=value))
        return [_operation(r) for r in self._answer(self._call("plans", "replay-control-log", values))]

    def effective_boundary(self, plans: Iterable[Plan]) -> Offsets:
        """The per-partition maximum over `plans`."""
        return _offsets(self._answer(self._call("plans", "effective-boundary", [_plan_record(p) for p in plans])))

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
        default) lets the component choose the production default from the cluster (its brokers'
        default.replication.factor, at most 3 and at most the broker count; min.insync.replicas
        2 from 3 replicas on). A control topic with fewer replicas than that default is reported
        in `ApplyReport.warnings`, never refused. `start_new_history` allows creating a missing
        control topic for a data topic that was already cleaned (refused otherwise: its history
        is in another control topic)."""
        (text,) = _texts([plan_json], "plan_json")
        options = record(
            control_topic=self.control_topic or "",
            replication_factor=None if replication_factor is None else _u16(replication_factor, "replication_factor"),
            dry_run=bool(dry_run),
            start_new_history=bool(start_new_history),
        )
        before = self.requests
        tag, value = self._call("coordinator", "apply", text, options)
        if tag == "err":
            # An apply-failure: the error, and the plan's status as the run last knew it.
            error = self._error(value.error)
            error.status = _status(value.status)
            error.commit_attempted = bool(field(value, "commit_attempted"))
            raise error
        return ApplyReport(
            plan_id=field(value, "plan_id"),
            outcome=value.outcome,
            status=_status(value.status),
            preview=[_preview(p) for p in value.preview],
            target=_offsets(value.target),
            beginnings_after=_offsets(field(value, "beginnings_after")),
            marked_applied=list(field(value, "marked_applied")),
            requests=self.requests - before,
            created_control_topic=_new_control_topic(field(value, "created_control_topic")),
            warnings=[_warning(w) for w in value.warnings],
        )

    def status(self) -> StatusReport:
        """The control topic's plans, effective boundary and the live data topic."""
        value = self._answer(self._call("coordinator", "control-status", self.control_topic or ""))
        return StatusReport(
            control_topic=field(value, "control_topic"),
            operations=[_operation(r) for r in value.operations],
            boundary=_offsets(value.boundary),
            topic=value.topic,
            topic_id=field(value, "topic_id"),
            live_topic_id=field(value, "live_topic_id"),
            live=[LivePartition(l.partition, l.beginning, l.end, l.boundary) for l in value.live],
            broken_history=field(value, "broken_history"),
        )

    def check_recovery(self, markers: Iterable[Union[str, bytes]], topic: Optional[str] = None, tombstones: bool = False) -> Verdict:
        """Would a restore from these markers be allowed now (SPEC §6)? Returns the verdict or
        raises the refusal (e.g. `BoundaryViolation`). Enforcement uses this object's control
        topic; without one it is standard recovery."""
        policy = record(topic=topic, control_topic=self.control_topic, tombstones_enabled=bool(tombstones))
        tag, value = self._call("recovery", "check-recovery", _texts(markers, "markers"), policy)
        if tag == "err":
            # A recovery-refusal: the error, and every partition below the boundary.
            error = self._error(value.error)
            error.violations = [_plain(v) for v in value.violations]
            raise error
        return _verdict(value)

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


class RecoverySession:
    """One runtime's recovery of one data topic, living in the component (`Cleanup.recovery_session`).

    `restore(markers)` applies SPEC §6 (decision table, topic identity, committed boundary, live
    range), captures each partition's end offset and positions the replay; `next_batch`,
    `replay` and `records` then return exactly the records of [requested, captured end), each
    batch one guest call; `snapshot_marker` is the marker for a checkpoint taken now: the
    restored offsets while a replay is unfinished, the live end offsets otherwise. Refusals and
    failures are the typed `CleanupError`s (`BoundaryViolation`, `TopicChanged`,
    `ReplayStalled`, `ReplayRecordInvalid`, `KafkaFailure`, ...); the session stays usable after
    them (e.g. restore from other markers). If the component instance is discarded (a trap, or
    an exception from `on_before_commit` during an apply), the session is lost and every call
    raises `InternalError`. Not thread-safe, like its `Cleanup`.
    """

    def __init__(
        self, cleanup: Cleanup, instance: ComponentInstance, handle: ResourceAny, topic: str, control_topic: Optional[str], tombstones: bool
    ) -> None:
        self.topic = topic
        #: The control topic whose boundary this session enforces (None: standard recovery).
        self.control_topic = control_topic
        self.tombstones = tombstones
        #: Per-partition progress reported by the last batch (empty before the first).
        self.progress: List[PartitionProgress] = []
        self._cleanup = cleanup
        self._instance: Optional[ComponentInstance] = instance
        self._handle: Optional[ResourceAny] = handle
        # Dropped without close: the guest resource is dropped at the Cleanup's next guest call.
        self._finalizer = weakref.finalize(self, cleanup._orphan, instance, handle)

    # --- plumbing ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _live(self) -> Tuple[ComponentInstance, ResourceAny]:
        if self._handle is None or self._instance is None:
            raise ValueError("the recovery session is closed")
        if self._instance is not self._cleanup._instance:
            reason = self._cleanup._lost_reason or "its Cleanup was closed"
            raise InternalError("internal", f"recovery session of {self.topic} is lost: its component instance was discarded because {reason}; start a new session")
        return self._instance, self._handle

    def _method(self, name: str, *args: Any) -> Any:
        instance, handle = self._live()
        outcome = self._cleanup._run(instance, lambda: instance.call("recovery", f"[method]recovery-session.{name}", handle, *args))
        return self._cleanup._answer(outcome)

    # --- the resource's methods ----------------------------------------------------------------

    def restore(self, markers: Iterable[Union[str, bytes]], *, poll_timeout_ms: int = 500, stall_timeout_ms: int = 30_000) -> Verdict:
        """Validates a restore from `markers` (JSON texts of one recovery point) and positions
        the replay. Returns the verdict, or raises the refusal (`BoundaryViolation`,
        `RecoveryRefused`, `TopicChanged`, `OffsetsUnavailable`, ...). A poll waits at most
        `poll_timeout_ms`; the replay fails with `ReplayStalled` after `stall_timeout_ms`
        without progress. A new restore replaces any replay in progress."""
        options = record(
            poll_timeout_ms=_u32(poll_timeout_ms, "poll_timeout_ms"),
            stall_timeout_ms=_u32(stall_timeout_ms, "stall_timeout_ms"),
        )
        verdict = _verdict(self._method("restore", _texts(markers, "markers"), options))
        self.progress = []
        return verdict

    def next_batch(self, max_records: int = 5000) -> ReplayBatch:
        """The next records of the replay (at most `max_records`, one guest call). Empty only
        when `done`: every partition reached its captured end and the topic identity was
        re-checked. Raises `InvalidArgument` without a replay in progress (none restored, or
        the last one is done).

        A failed batch (`ReplayRecordInvalid`, `KafkaFailure`, `ReplayStalled`, `TopicChanged`,
        an interrupt, ...) ends the replay in the component: the records that call had already
        taken from the consumer were never returned, so every further call raises
        `InvalidArgument` ("... restore again") until the next `restore`. Restoring again from
        the same markers replays from the start."""
        host = self._cleanup._host
        host.last_polled = None
        value = self._method("next-batch", _u32(max_records, "max_records"))
        # Indices into the records of the consumer's latest poll, which the host still holds:
        # keys and values never crossed into the component.
        held = host.last_polled.last if host.last_polled is not None else []
        records = [ReplayedRecord(held[i].partition, held[i].offset, held[i].key, held[i].value) for i in value.records]
        progress = [PartitionProgress(p.partition, p.position, p.target) for p in value.progress]
        self.progress = progress
        return ReplayBatch(records=records, done=value.done, progress=progress)

    def replay(self, max_records: int = 5000) -> Iterator[ReplayBatch]:
        """Yields the replay's batches (each non-empty, at most `max_records` records) until
        the component reports it done."""
        while True:
            batch = self.next_batch(max_records)
            if batch.records:
                yield batch
            if batch.done:
                return

    def records(self, max_records: int = 5000) -> Iterator[ReplayedRecord]:
        """Yields every replayed record, fetched `max_records` per guest call."""
        for batch in self.replay(max_records):
            yield from batch.records

    def snapshot_marker(self) -> str:
        """The versioned marker (compact JSON) to store in a checkpoint taken now: while a
        restore's replay is unfinished it carries the restored offsets, otherwise the topic's
        live end offsets. Raises `TopicChanged` when the topic was recreated or its partitions
        changed since the session started."""
        return self._method("snapshot-marker")

    # --- lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        """Drops the guest resource (and with it the consumer it owns). Idempotent."""
        if self._handle is None:
            return
        instance, handle = self._instance, self._handle
        self._handle = None
        self._instance = None
        self._finalizer.detach()
        self._cleanup._sessions.discard(self)
        if instance is not None and instance is self._cleanup._instance:
            self._cleanup._run(instance, lambda: instance.drop(handle))

    def __enter__(self) -> "RecoverySession":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"RecoverySession(topic={self.topic!r}, control_topic={self.control_topic!r}, {state})"

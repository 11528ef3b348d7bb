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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from wasmtime import WasmtimeError

from . import _component, errors
from ._component import ComponentInstance, HostState, Trap, build_linker, field, record
from ._kafka import CapabilityError, KafkaCapabilities, ReplayConsumer, kafka_uuid
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
    ControlEntry,
    LivePartition,
    Offsets,
    Operation,
    PartitionPreview,
    PartitionRange,
    Plan,
    RequestCounts,
    StatusReport,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "Cleanup",
    "Plan",
    "ApplyReport",
    "StatusReport",
    "Verdict",
    "Operation",
    "LivePartition",
    "PartitionPreview",
    "PartitionRange",
    "RequestCounts",
    "ControlEntry",
    "CleanupError",
    "InvalidPlan",
    "InvalidMarker",
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
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, _component.Variant):
        return {"tag": value.tag, "payload": _plain(value.payload)}
    return value


def _offsets(values: Sequence[Any]) -> Offsets:
    return {v.partition: v.offset for v in values}


def _offset_records(offsets: Offsets) -> List[Any]:
    return [record(partition=int(p), offset=int(o)) for p, o in offsets.items()]


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


def _operation(value: Any) -> Operation:
    return Operation(plan=_plan(value.plan), status=_STATUS[value.status])


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
    written; raising from it aborts the apply with nothing durable done. Not thread-safe: use
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

    # --- plumbing ------------------------------------------------------------------------------

    def _before_commit(self, plan_id: str, preview: List[Any]) -> None:
        rows = [_preview(p) for p in preview]
        self.last_preview = (plan_id, rows)
        if self.on_before_commit is not None:
            self.on_before_commit(plan_id, rows)

    def _call(self, iface: str, name: str, *args: Any) -> Any:
        if self._instance is None:
            try:
                self._instance = ComponentInstance(self._loaded, self._linker)
            except WasmtimeError as e:
                # E.g. a component built from a WIT whose imports this host does not provide.
                raise InternalError("internal", f"cannot instantiate the cleanup component {self._loaded.path}: {e}") from e
        try:
            value = self._instance.call(iface, name, *args)
            if self._host.interrupted is not None:
                interrupt, self._host.interrupted = self._host.interrupted, None
                raise interrupt
            return value
        except Trap as trap:
            self._instance = None
            raise InternalError("internal", f"internal error in the cleanup component: {trap}") from trap
        except BaseException:
            # The embedder's callback raised inside a guest call: the instance is poisoned.
            self._instance = None
            raise

    def _answer(self, outcome: Any) -> Any:
        """The ok value of a `result<_, cleanup-error>`, or the matching exception."""
        tag, value = outcome
        if tag == "ok":
            return value
        message = self._call("plans", "message", value)
        raise errors.from_component(value.tag, _plain(value.payload), message)

    @property
    def requests(self) -> RequestCounts:
        """Capability calls made so far (each admin call is one broker request)."""
        return self.kafka.counts if self.kafka is not None else RequestCounts()

    def close(self) -> None:
        self._instance = None
        self._host.close_consumers()
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
        return _offsets(self._call("plans", "effective-boundary", [_plan_record(p) for p in plans]))

    # --- Kafka: apply, status, recovery ------------------------------------------------------

    def apply(self, plan_json: Union[str, bytes], replication_factor: int = 1, dry_run: bool = False) -> ApplyReport:
        """Applies a plan document with the commit-before-delete protocol (SPEC §5)."""
        (text,) = _texts([plan_json], "plan_json")
        options = record(control_topic=self.control_topic or "", replication_factor=replication_factor, dry_run=bool(dry_run))
        before = self.requests
        value = self._answer(self._call("coordinator", "apply", text, options))
        return ApplyReport(
            plan_id=field(value, "plan_id"),
            outcome=value.outcome,
            status=_status(value.status),
            preview=[_preview(p) for p in value.preview],
            target=_offsets(value.target),
            beginnings_after=_offsets(field(value, "beginnings_after")),
            marked_applied=list(field(value, "marked_applied")),
            requests=self.requests - before,
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
        )

    def check_recovery(self, markers: Iterable[Union[str, bytes]], topic: Optional[str] = None, tombstones: bool = False) -> Verdict:
        """Would a restore from these markers be allowed now (SPEC §6)? Returns the verdict or
        raises the refusal (e.g. `BoundaryViolation`). Enforcement uses this object's control
        topic; without one it is standard recovery."""
        policy = record(topic=topic, control_topic=self.control_topic, tombstones_enabled=bool(tombstones))
        value = self._answer(self._call("recovery", "check-recovery", _texts(markers, "markers"), policy))
        return Verdict(
            topic=value.topic,
            boundary=None if value.boundary is None else _offsets(value.boundary),
            versioned=value.versioned,
            ranges=[PartitionRange(r.partition, r.requested, r.beginning, r.end) for r in value.ranges],
        )

    def snapshot_marker(self, topic: str) -> str:
        """The versioned recovery marker of `topic` as of now (compact JSON)."""
        return self._answer(self._call("recovery", "snapshot-marker", topic))

"""Python exceptions for the cleanup component's `cleanup-error` variant.

Every exception carries the WIT case name as ``kind`` and the component's own one-sentence
message (from ``plans.message``) as ``message``; the case's fields become attributes. Nothing here
decides anything: the component chose the case, the host only translates it.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type


class CleanupError(Exception):
    """A refusal or failure reported by the cleanup component (or, for ``kind == "internal"``,
    a trap inside the component runtime)."""

    kind: str = "cleanup-error"

    def __init__(self, kind: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        #: The case's payload as the component returned it (a string or a dict of fields).
        self.details = details
        #: For a failed apply: the plan's status in the control topic as the run last knew it
        #: ("COMMITTED": a second apply finishes it, "APPLIED", or None).
        self.status: Optional[str] = None
        #: For a failed apply: whether the run's COMMITTED record may have been written (False:
        #: this run committed nothing: it sent none, or it was fenced by a concurrent apply).
        self.commit_attempted: bool = False
        #: For a failed apply or a refused check_recovery: what it means, decided by the
        #: component: "refused" (a check refused the input), "failed" (Kafka), "fenced" (apply:
        #: another apply of the control topic took it over) or "restore-refused"
        #: (check_recovery: the recovery rules say no). None for other calls.
        self.failure_class: Optional[str] = None
        #: For a failed apply: the plan's ID when the document was a plan (None when rejected).
        self.plan_id: Optional[str] = None
        #: For a refused check-recovery below the boundary: every violating partition, each a
        #: dict with topic, partition, requested, boundary.
        self.violations: list = []
        #: For a refused check-recovery below the boundary: the component's sentence naming the
        #: plan and recovery point that committed the boundary (None otherwise).
        self.hint: Optional[str] = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, message={self.message!r})"


class InvalidPlan(CleanupError):
    """A plan document or value breaks a rule of SPEC §2; nothing was done."""


class InvalidMarker(CleanupError):
    """A recovery marker breaks a rule of SPEC §2–§3; nothing was done."""


class InvalidSnapshot(CleanupError):
    """A Flink checkpoint or savepoint file cannot be read; the message names the file, the byte
    offset and what was expected. Nothing was done."""


class InvalidArgument(CleanupError):
    """An argument is out of range or contradicts another; nothing was done."""


class BoundaryViolation(CleanupError):
    """A restore asks for an offset below the committed boundary."""

    topic: str
    partition: int
    requested: int
    boundary: int


class BoundaryRegression(CleanupError):
    """A plan would move a partition's boundary backwards; nothing was committed."""

    plan_id: str
    partition: int
    planned: int
    boundary: int


class TopicChanged(CleanupError):
    """The data topic was recreated or its partitions changed."""

    topic: str
    context: str
    expected_topic_id: str
    found_topic_id: str
    expected_partitions: list
    found_partitions: list


class UnsafeTopicConfig(CleanupError):
    """The data topic's configuration would let Kafka delete records on its own."""


class InvalidControlTopic(CleanupError):
    """The control topic is missing, has more than one partition or is not compact-only."""


class OffsetsUnavailable(CleanupError):
    """A plan or restore offset lies outside [beginning, end] of its partition."""

    topic: str
    partition: int
    requested: int
    beginning: Optional[int]
    end: Optional[int]


class DeleteUnverified(CleanupError):
    """After deletion a partition still begins below its target; the plan stays COMMITTED."""

    topic: str
    partition: int
    requested: int
    beginning: Optional[int]
    end: Optional[int]


class ControlTopicCorrupt(CleanupError):
    """The control topic breaks an integrity rule of SPEC §7; apply and recovery stop."""


class RecoveryRefused(CleanupError):
    """The recovery decision table refuses (no committed boundary, legacy markers, mixtures)."""


class ConflictingPolicies(CleanupError):
    """Cleanup and per-key tombstones were both enabled."""


class Fenced(CleanupError):
    """Another writer holds the control topic."""


class ReplayStalled(CleanupError):
    """Replay made no progress within the configured window."""


class ReplayRecordInvalid(CleanupError):
    """A replayed record could not be decoded."""


class KafkaFailure(CleanupError):
    """A Kafka client failure or timeout, as the host reported it to the component."""

    operation: str
    kafka_message: str
    retriable: bool
    #: The host's last `kafka-error` when a capability call failed: {"tag": case, "payload":
    #: {"code", "name", "message"}}, else None.
    cause: Optional[Dict[str, Any]]


class InternalError(CleanupError):
    """A trap or runtime failure inside the component: never the caller's input."""


class SnapshotUnavailable(CleanupError):
    """A snapshot's store did not give one of its files: ``reason`` is the WIT `store-error` case
    (``not-found``, ``denied``, ``unreachable``, ``unsupported``, ``too-large``, ``failed``),
    ``location`` the object asked for; the message is the component's sentence. Nothing was done."""

    reason: str
    location: str


#: WIT case name -> (exception class, payload field names or None for a string payload).
ERROR_CASES: Dict[str, Tuple[Type[CleanupError], Optional[Tuple[str, ...]]]] = {
    "invalid-plan": (InvalidPlan, None),
    "invalid-marker": (InvalidMarker, None),
    "invalid-snapshot": (InvalidSnapshot, None),
    "invalid-argument": (InvalidArgument, None),
    "boundary-violation": (BoundaryViolation, ("topic", "partition", "requested", "boundary")),
    "boundary-regression": (BoundaryRegression, ("plan-id", "partition", "planned", "boundary")),
    "topic-changed": (
        TopicChanged,
        ("topic", "context", "expected-topic-id", "found-topic-id", "expected-partitions", "found-partitions"),
    ),
    "unsafe-topic-config": (UnsafeTopicConfig, None),
    "invalid-control-topic": (InvalidControlTopic, None),
    "offsets-unavailable": (OffsetsUnavailable, ("topic", "partition", "requested", "beginning", "end")),
    "delete-unverified": (DeleteUnverified, ("topic", "partition", "requested", "beginning", "end")),
    "control-topic-corrupt": (ControlTopicCorrupt, None),
    "recovery-refused": (RecoveryRefused, None),
    "conflicting-policies": (ConflictingPolicies, None),
    "fenced": (Fenced, None),
    "replay-stalled": (ReplayStalled, None),
    "replay-record-invalid": (ReplayRecordInvalid, None),
    "kafka": (KafkaFailure, ("operation", "message", "retriable", "cause")),
}


def from_component(kind: str, payload: Any, message: str) -> CleanupError:
    """Builds the exception for one `cleanup-error` case (payload already converted to plain
    Python: a string, or a dict keyed by the WIT field names)."""
    cls, fields = ERROR_CASES.get(kind, (CleanupError, None))
    error = cls(kind, message, payload)
    if fields is not None and isinstance(payload, dict):
        for name in fields:
            attribute = name.replace("-", "_")
            if cls is KafkaFailure and name == "message":
                # `message` is the component's sentence; the client's text keeps its own name.
                attribute = "kafka_message"
            setattr(error, attribute, payload.get(name))
    return error

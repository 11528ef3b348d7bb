"""Plain Python values for what the component returns. Offsets are dicts keyed by partition, in
the component's (ascending) order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, NamedTuple, Optional

Offsets = Dict[int, int]


@dataclass(frozen=True)
class Plan:
    """A verified cleanup plan (SPEC §2). Only the component creates these from text; build one
    yourself only to hand it back to the component (e.g. `render`), which re-validates it."""

    schema_version: int
    plan_id: str
    source_recovery_point: str
    topic: str
    topic_id: str
    offsets: Offsets


@dataclass(frozen=True)
class PartitionPreview:
    partition: int
    beginning: int
    boundary: int
    end: int
    records_to_delete: int


@dataclass(frozen=True)
class RequestCounts:
    """Capability calls made through this host, by kind (each admin call is one broker request)."""

    admin: int = 0
    control_reads: int = 0
    control_writes: int = 0
    consumer_polls: int = 0

    @property
    def total(self) -> int:
        return self.admin + self.control_reads + self.control_writes + self.consumer_polls

    def __sub__(self, other: "RequestCounts") -> "RequestCounts":
        return RequestCounts(
            self.admin - other.admin,
            self.control_reads - other.control_reads,
            self.control_writes - other.control_writes,
            self.consumer_polls - other.consumer_polls,
        )


@dataclass(frozen=True)
class ApplyReport:
    plan_id: str
    #: "applied", "resumed", "already-applied", "dry-run" or "declined" (on_before_commit
    #: returned False: nothing committed).
    outcome: str
    #: "COMMITTED", "APPLIED", or None (dry run of a fresh plan).
    status: Optional[str]
    preview: List[PartitionPreview]
    target: Offsets
    beginnings_after: Offsets
    marked_applied: List[str]
    #: Capability calls this apply made.
    requests: RequestCounts = field(default_factory=RequestCounts)
    #: The control topic this apply created (in a dry run: would create), else None.
    created_control_topic: Optional["NewControlTopic"] = None
    #: What the operator should fix although the apply went on (WIT `apply-warning`).
    warnings: List["ApplyWarning"] = field(default_factory=list)


@dataclass(frozen=True)
class NewControlTopic:
    """A control topic an apply created because it was missing: a new cleanup history."""

    name: str
    partitions: int
    replication_factor: int
    min_insync_replicas: int


@dataclass(frozen=True)
class ControlTopicReplication:
    """A control topic with fewer replicas than its cluster's production default (3, or the
    number of brokers when there are fewer, whatever default.replication.factor says)."""

    control_topic: str
    #: Its replicas now.
    replication_factor: int
    recommended_replication_factor: int
    recommended_min_insync_replicas: int
    broker_count: int
    cluster_default_replication_factor: int
    #: The document for `kafka-reassign-partitions --reassignment-json-file` that adds them.
    reassignment: str


@dataclass(frozen=True)
class ApplyWarning:
    """Something an apply found that the operator should fix; the apply went on regardless."""

    #: "under-replicated-control-topic" or "replication-unchecked" (the WIT case).
    kind: str
    #: The one sentence to show, with the commands that fix it.
    message: str
    #: The facts of an under-replicated control topic; None for the other kinds.
    replication: Optional[ControlTopicReplication] = None


@dataclass(frozen=True)
class Operation:
    """One plan in a control topic with its latest status."""

    plan: Plan
    #: "COMMITTED" or "APPLIED".
    status: str

    @property
    def plan_id(self) -> str:
        return self.plan.plan_id


@dataclass(frozen=True)
class LivePartition:
    partition: int
    beginning: int
    end: int
    boundary: int


@dataclass(frozen=True)
class PlanTimes:
    """When a plan became COMMITTED and APPLIED: the control records' Kafka timestamps in
    milliseconds since the Unix epoch; None when the record had none, or compaction kept only
    the plan's newest record."""

    committed_at: Optional[int]
    applied_at: Optional[int]


@dataclass(frozen=True)
class StatusReport:
    control_topic: str
    operations: List[Operation]
    boundary: Offsets
    topic: Optional[str]
    topic_id: Optional[str]
    live_topic_id: Optional[str]
    live: List[LivePartition]
    #: The component's sentence when the live topic begins past the committed boundary
    #: (records were deleted outside this history), else None.
    broken_history: Optional[str] = None
    #: One per operation, in the same order.
    times: List[PlanTimes] = field(default_factory=list)
    #: Per partition of `boundary`: the plan ID whose offset it is (its source recovery point
    #: is where the boundary came from).
    boundary_origins: Dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PartitionRange:
    partition: int
    requested: int
    beginning: int
    end: int


@dataclass(frozen=True)
class Verdict:
    """An allowed restore (a refused one raises)."""

    topic: str
    #: The committed boundary that was enforced; None in standard mode (no control topic).
    boundary: Optional[Offsets]
    versioned: bool
    ranges: List[PartitionRange]

    @property
    def enforced(self) -> bool:
        return self.boundary is not None


class ReplayedRecord(NamedTuple):
    """One replayed action state of a recovery session, in its partition's order. A tuple
    (partition, offset, key, value), cheap to make in bulk."""

    partition: int
    offset: int
    #: The action-state key (the component refuses records without one).
    key: str
    #: The state; None is a tombstone, which removes the key.
    value: Optional[str]

    @property
    def tombstone(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class PartitionProgress:
    """Replay progress of one partition of a restore."""

    partition: int
    #: The next offset to replay.
    position: int
    #: The end offset captured by `restore`: replay stops there.
    target: int


@dataclass(frozen=True)
class ReplayBatch:
    """What one `RecoverySession.next_batch` returned. Iterating it iterates its records."""

    records: List[ReplayedRecord]
    #: Every partition reached its captured end and the topic identity was re-checked.
    done: bool
    progress: List[PartitionProgress]

    def __iter__(self) -> Iterator[ReplayedRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


@dataclass(frozen=True)
class RetainedPoint:
    """One recovery point `Cleanup.plan_retained` found and planned: its own minimum offsets."""

    location: str
    offsets: Offsets


@dataclass(frozen=True)
class RetainedPlan:
    """The plan from every retained recovery point (`Cleanup.plan_retained`), and how it was
    bounded: `bounded_by` maps each partition to its minimum offset and the locations of the
    points holding it; the plan records `recorded`, the point that bounds every partition
    (`bounds_every_partition`) or else the one that bounds the most."""

    plan: Plan
    points: List[RetainedPoint]
    bounded_by: Dict[int, "tuple[int, List[str]]"]
    recorded: str
    bounds_every_partition: bool
    incomplete: List[str]
    excluded: List[str]
    unmatched_exclusions: List[str]


@dataclass(frozen=True)
class ControlEntry:
    """One control-topic record as read (for `Cleanup.replay_control_log`)."""

    offset: int
    key: Optional[str]
    value: Optional[str]

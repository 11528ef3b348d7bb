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

from pathlib import Path

from . import _component
from ._cleanup import Cleanup
from ._session import RecoverySession
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
    SnapshotUnavailable,
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
    PlanTimes,
    ReplayBatch,
    ReplayedRecord,
    RequestCounts,
    RetainedPlan,
    RetainedPoint,
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
    "RetainedPlan",
    "RetainedPoint",
    "ApplyReport",
    "ApplyWarning",
    "ControlTopicReplication",
    "StatusReport",
    "PlanTimes",
    "Verdict",
    "Operation",
    "LivePartition",
    "NewControlTopic",
    "PartitionPreview",
    "PartitionRange",
    "Offsets",
    "RequestCounts",
    "ControlEntry",
    "CleanupError",
    "InvalidPlan",
    "InvalidMarker",
    "InvalidSnapshot",
    "SnapshotUnavailable",
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
    "component_path",
]


def component_path() -> Path:
    """Where the bundled cleanup component lives."""
    return _component.bundled_component_path()

//! The name of each `cleanup-error` case as the WIT spells it, which the CLI's `--json` output
//! and exit codes use. The bindings carry the names only as attributes, so they are written
//! here once; `tests/error_tables.rs` checks them against `wit/types.wit`.

use crate::cleanup::CleanupError;

impl CleanupError {
    /// The WIT case name, e.g. "invalid-plan": stable, for scripts.
    pub fn kind(&self) -> &'static str {
        match self {
            CleanupError::InvalidPlan(_) => "invalid-plan",
            CleanupError::InvalidMarker(_) => "invalid-marker",
            CleanupError::InvalidArgument(_) => "invalid-argument",
            CleanupError::BoundaryViolation(_) => "boundary-violation",
            CleanupError::BoundaryRegression(_) => "boundary-regression",
            CleanupError::TopicChanged(_) => "topic-changed",
            CleanupError::UnsafeTopicConfig(_) => "unsafe-topic-config",
            CleanupError::InvalidControlTopic(_) => "invalid-control-topic",
            CleanupError::OffsetsUnavailable(_) => "offsets-unavailable",
            CleanupError::DeleteUnverified(_) => "delete-unverified",
            CleanupError::ControlTopicCorrupt(_) => "control-topic-corrupt",
            CleanupError::RecoveryRefused(_) => "recovery-refused",
            CleanupError::ConflictingPolicies(_) => "conflicting-policies",
            CleanupError::Fenced(_) => "fenced",
            CleanupError::ReplayStalled(_) => "replay-stalled",
            CleanupError::ReplayRecordInvalid(_) => "replay-record-invalid",
            CleanupError::Kafka(_) => "kafka",
            CleanupError::InvalidSnapshot(_) => "invalid-snapshot",
        }
    }
}

//! The WIT `kafka-error`: the case a host reports for a failed Kafka call and the error itself.
//! A leaf, below `error` (whose `KafkaFailure` carries one as its cause) and `capabilities` (which
//! re-exports both).

use std::fmt;

/// The case of a host's `kafka-error`: what a caller must tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    UnknownTopic,
    Authorization,
    Authentication,
    Timeout,
    Transport,
    NotLeader,
    Fenced,
    PolicyViolation,
    OffsetOutOfRange,
    Other,
}

impl ErrorKind {
    /// Every case, in the WIT's order (`host/tests/components.rs` checks it against the WIT).
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::UnknownTopic,
        ErrorKind::Authorization,
        ErrorKind::Authentication,
        ErrorKind::Timeout,
        ErrorKind::Transport,
        ErrorKind::NotLeader,
        ErrorKind::Fenced,
        ErrorKind::PolicyViolation,
        ErrorKind::OffsetOutOfRange,
        ErrorKind::Other,
    ];

    /// Whether waiting and asking again may succeed: the cluster is briefly unreachable, slow or
    /// between leaders. Everything else is an answer.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout | ErrorKind::Transport | ErrorKind::NotLeader
        )
    }

    /// The WIT case name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::UnknownTopic => "unknown-topic",
            ErrorKind::Authorization => "authorization",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Transport => "transport",
            ErrorKind::NotLeader => "not-leader",
            ErrorKind::Fenced => "fenced",
            ErrorKind::PolicyViolation => "policy-violation",
            ErrorKind::OffsetOutOfRange => "offset-out-of-range",
            ErrorKind::Other => "other",
        }
    }
}

/// WIT `kafka-error`, what a host capability reports: its case plus the broker's (or client's) code, name and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaError {
    pub kind: ErrorKind,
    pub code: i32,
    pub name: String,
    pub message: String,
}

impl KafkaError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        KafkaError {
            kind,
            code: 0,
            name: String::new(),
            message: message.into(),
        }
    }

    /// GROUP_AUTHORIZATION_FAILED (30) reported by a consumer's poll. Every consumer of this
    /// component is assign-only: it never joins its group, commits, or asks for committed
    /// offsets, so reading needs no group permission. librdkafka still requires a `group.id`
    /// and looks up that group's coordinator in the background, and when the brokers refuse the
    /// lookup it reports the refusal once as a consumer event. That says nothing about the
    /// records being read, so a read ignores it and polls again.
    pub fn is_unused_group_refusal(&self) -> bool {
        self.kind == ErrorKind::Authorization && self.code == GROUP_AUTHORIZATION_FAILED
    }
}

/// Kafka's protocol code for a refused group permission.
pub const GROUP_AUTHORIZATION_FAILED: i32 = 30;

impl fmt::Display for KafkaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // librdkafka messages usually start with the code name already.
        if self.name.is_empty() || self.message.contains(&self.name) {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.name, self.message)
        }
    }
}

impl std::error::Error for KafkaError {}

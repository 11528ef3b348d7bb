//! Every Kafka policy of the component, written once over the plain 0.3 capabilities: deadlines
//! and back-off over the imported clock, what each error case means (one rule for every
//! capability, the replay consumer's included), waiting until a created topic is visible and an
//! appended record is stable, the control-log read loop, the transactional id, and strict
//! decoding of control records. `Policy` is the one Kafka abstraction of the core: every
//! protocol (apply, recovery, replay, status) takes a `&mut Policy<C>` and calls its methods.

mod admin;
mod control;
mod delete;
mod replay;

pub use control::{APPEND_MS_PER_KIB, transactional_id};
pub use delete::{DELETE_MS_PER_PARTITION, delete_request_bound_ms};
pub use replay::ReplayPoll;

use crate::capabilities::{Capabilities, ErrorKind, Kafka, KafkaError, KafkaResult};
use crate::classified::Classified;
use crate::kafka_types::PolicyResult;
use action_state_format::error::{CleanupError, KafkaFailure};

/// First back-off after a transient error; it doubles up to `MAX_BACKOFF_MS`.
const FIRST_BACKOFF_MS: u32 = 20;
/// The first wait for a committed record to become visible: the transaction's markers usually
/// land within a millisecond or two of the commit, so a 20 ms first wait would be most of an
/// apply's time on a healthy cluster (it doubles from here).
const STABLE_FIRST_BACKOFF_MS: u32 = 1;
const MAX_BACKOFF_MS: u32 = 500;

/// How long a failing step stays quiet before the operator hears that it is being retried,
/// and then between two such reports: a leader change retried within milliseconds says nothing.
const RETRY_REPORT_MS: u64 = 1_000;

/// A deadline over the imported clock, with doubling back-off.
struct Deadline {
    end: u64,
    /// The time the step is allowed: the operation timeout plus any allowance for its width.
    allowed: u64,
    backoff: u32,
    /// When the next retry may be reported (`retrying`).
    next_report: u64,
}

impl Deadline {
    fn start<C: Capabilities>(caps: &mut C) -> Self {
        Deadline::start_wide(caps, FIRST_BACKOFF_MS, 0)
    }

    /// A deadline `extra_ms` past the operation timeout: the allowance of a wide step.
    fn start_wide<C: Capabilities>(caps: &mut C, first_backoff_ms: u32, extra_ms: u64) -> Self {
        let allowed = u64::from(caps.operation_timeout_ms().max(1)).saturating_add(extra_ms);
        let now = caps.now_ms();
        Deadline {
            end: now.saturating_add(allowed),
            allowed,
            backoff: first_backoff_ms,
            next_report: now.saturating_add(RETRY_REPORT_MS),
        }
    }

    /// Tells the operator that the step is retried (at most once a second, and only once it has
    /// failed for a second), with the sentence its failure would end with.
    fn report<C: Capabilities>(&mut self, caps: &mut C, message: impl FnOnce() -> String) {
        let now = caps.now_ms();
        if now >= self.next_report && now < self.end {
            caps.retrying(&message(), self.end - now);
            self.next_report = now.saturating_add(RETRY_REPORT_MS);
        }
    }

    /// Sleeps the next back-off unless the deadline has passed (then `false`).
    fn wait<C: Capabilities>(&mut self, caps: &mut C) -> bool {
        let now = caps.now_ms();
        if now >= self.end {
            return false;
        }
        let left = u32::try_from(self.end - now).unwrap_or(u32::MAX);
        caps.sleep_ms(self.backoff.min(left));
        self.backoff = (self.backoff.saturating_mul(2)).min(MAX_BACKOFF_MS);
        true
    }

    fn passed<C: Capabilities>(&self, caps: &mut C) -> bool {
        caps.now_ms() >= self.end
    }
}

/// Whether a step that failed with `kind` may succeed when run again, because the cluster may
/// answer differently later: the one rule for every capability's failure.
fn retriable(kind: ErrorKind) -> bool {
    kind.is_transient() || matches!(kind, ErrorKind::Fenced | ErrorKind::Other)
}

/// A host error as the failure of a step: `what` the step was doing, then the host's sentence.
fn failure(operation: &str, what: &str, error: KafkaError) -> KafkaFailure {
    let mut failed = bare_failure(operation, error);
    failed.message = format!("{what}: {}", failed.message);
    failed
}

/// A host error as the failure of a step, in the host's words only (the replay consumer's
/// steps, whose operation name says what they were doing).
fn bare_failure(operation: &str, error: KafkaError) -> KafkaFailure {
    KafkaFailure {
        operation: operation.to_owned(),
        message: format!("{error} ({})", error.kind.name()),
        retriable: retriable(error.kind),
        cause: Some(error),
    }
}

/// An answer that breaks the capability contract (wrong count, missing partition).
fn contract(operation: &str, why: String) -> KafkaFailure {
    KafkaFailure::new(
        operation,
        format!("the host broke the capability contract: {why}"),
        false,
    )
}

/// The Kafka operations the protocols need, over plain capabilities: each method is one step,
/// with its retries, deadline and meaning of errors.
pub struct Policy<C: Capabilities> {
    /// The host's capabilities, their errors classified by the core's table of protocol codes
    /// before any rule here reads a case (`kafka_codes`).
    caps: Classified<C>,
    /// The transactional writer of the control topic this run fenced.
    control_writer: Option<control::ControlWriter<C::Writer>>,
    /// An idempotent writer, for records that need no fencing once the fenced one is gone.
    plain_writer: Option<C::Writer>,
    /// The consumer that reads the control topic, kept between reads.
    control_reader: Option<(String, C::Consumer)>,
    /// The consumer a recovery session replays a data topic with, kept between batches.
    replay_reader: Option<(String, C::Consumer)>,
    /// Topics known to exist (created or waited for): metadata reaches every broker a little
    /// later, and an answer from a broker that has not seen one yet must not make it missing.
    known: Vec<String>,
    /// Topics this run asked to create, with their partition count: until metadata shows them
    /// with every partition, a describe asks again (`request_topic` returns without waiting).
    requested: Vec<(String, u32)>,
    /// Topics a `describe` of this run answered: a partition request that then says the topic
    /// is unknown (librdkafka answers "no leaders found" while a partition elects one) is
    /// asked again until the deadline instead of failing the step.
    seen: Vec<String>,
}

impl<C: Capabilities> Policy<C> {
    pub fn new(caps: C) -> Self {
        Policy {
            caps: Classified(caps),
            control_writer: None,
            plain_writer: None,
            control_reader: None,
            replay_reader: None,
            known: Vec::new(),
            requested: Vec::new(),
            seen: Vec::new(),
        }
    }

    /// Runs `call` until it succeeds, fails with a non-transient error, or the deadline passes
    /// (transient: timeout, transport, not-leader; each retry asks again, which refreshes the
    /// client's metadata).
    fn retry<T>(
        &mut self,
        operation: &str,
        what: &str,
        call: impl FnMut(&mut Classified<C>) -> KafkaResult<T>,
    ) -> PolicyResult<T> {
        self.retry_on(operation, what, false, call)
    }

    /// `retry` for a request about the partitions of `topic`: when this run saw the topic
    /// exist, an unknown-topic answer is transient too (a partition without a leader yet).
    fn retry_partitions<T>(
        &mut self,
        operation: &str,
        what: &str,
        topic: &str,
        call: impl FnMut(&mut Classified<C>) -> KafkaResult<T>,
    ) -> PolicyResult<T> {
        let exists = self.seen.iter().chain(&self.known).any(|t| t == topic);
        self.retry_on(operation, what, exists, call)
    }

    fn retry_on<T>(
        &mut self,
        operation: &str,
        what: &str,
        unknown_is_transient: bool,
        mut call: impl FnMut(&mut Classified<C>) -> KafkaResult<T>,
    ) -> PolicyResult<T> {
        let mut deadline = Deadline::start(&mut self.caps);
        loop {
            match call(&mut self.caps) {
                Ok(answer) => return Ok(answer),
                Err(error)
                    if error.kind.is_transient()
                        || (unknown_is_transient && error.kind == ErrorKind::UnknownTopic) =>
                {
                    deadline.report(&mut self.caps, || {
                        CleanupError::Kafka(failure(operation, what, error.clone())).to_string()
                    });
                    if !deadline.wait(&mut self.caps) {
                        return Err(failure(operation, what, error));
                    }
                }
                Err(error) => return Err(failure(operation, what, error)),
            }
        }
    }

    /// Waits `ms` milliseconds (the protocol's own pauses, e.g. after being fenced).
    pub fn pause(&mut self, ms: u32) {
        self.caps.sleep_ms(ms);
    }
}

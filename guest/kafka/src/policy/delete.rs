//! The DeleteRecords step: every attempt follows a describe that the caller decides on and that
//! confirms the topic's identity, with an allowance for wide deletes and, when it runs out of
//! time, which partitions are still pending.

use super::admin::state;
use super::{Deadline, FIRST_BACKOFF_MS, Policy, failure};
use crate::capabilities::{Capabilities, ErrorKind, Kafka};
use crate::kafka_types::{OffsetSpec, TopicDescription, TopicState};
use crate::topics::check_identity;
use action_state_format::error::{CleanupError, Result};
use action_state_format::offsets::PartitionOffsets;

/// How much longer than the operation timeout a DeleteRecords step may take, per partition it
/// deletes on. Kafka answers a DeleteRecords only once every replica of every partition moved
/// its log start: 9 s for 5,000 partitions at replication factor 3 on a loaded 3-node cluster
/// (about 2 ms per partition), past a third of the default 30 s timeout at 10,000. A request cut
/// short is not lost (the leaders moved their log starts; the retry, after the identity check,
/// waits only for what is left), but the step needs the time.
pub const DELETE_MS_PER_PARTITION: u64 = 5;

/// The bound on a DeleteRecords request of a call on `partitions` partitions, where any other
/// single request is bounded by `request_ms` (a host's third of the operation timeout): the
/// same `DELETE_MS_PER_PARTITION` more for each partition. A host that sends one call as
/// several requests in flight at once gives each this bound (they share the brokers, and
/// requests to one leader are answered in turn). A request is answered only once every
/// replica of every partition it carries moved its log start, so a fixed bound cut wide
/// deletes short on a healthy cluster (10,000 partitions on 3 nodes ran out of 10 s; the retry
/// finished the plan, but the operator read a Kafka failure in a successful apply). The step
/// is allowed the full operation timeout plus the same per partition, so a request that does
/// run out still leaves the rest of the operation timeout for the describe and the retry.
pub fn delete_request_bound_ms(request_ms: u64, partitions: usize) -> u64 {
    let partitions = u64::try_from(partitions).unwrap_or(u64::MAX);
    request_ms.saturating_add(partitions.saturating_mul(DELETE_MS_PER_PARTITION))
}

impl<C: Capabilities> Policy<C> {
    /// Deletes every record below offsets decided from the description each attempt is sent
    /// after, on the physical topic `expected` (its name, ID and partitions); returns the
    /// resulting beginnings (low watermarks) Kafka reported. Every attempt describes
    /// `expected.topic` (with the configuration entries `names` and, with `with_ranges`, every
    /// partition's range), confirms the identity, then hands the answer to `decide`, which
    /// checks it and returns the offsets to delete below or refuses; the delete follows. A
    /// retry describes, confirms and decides again. `decide` is the
    /// caller's last check: the description it sees is the one the request follows, with no
    /// other Kafka call between them.
    ///
    /// DeleteRecords names a topic only by its name, so a topic deleted and recreated under the
    /// same name would lose its prefix instead: a changed or missing identity ends the call
    /// with `topic-changed` and nothing sent. What remains is the one round trip between that
    /// describe and the request, which Kafka's DeleteRecords (no topic-ID form) cannot close.
    pub fn delete_described(
        &mut self,
        expected: &TopicDescription,
        names: &[&str],
        with_ranges: bool,
        decide: &mut dyn FnMut(Option<&TopicState>) -> Result<PartitionOffsets>,
    ) -> Result<PartitionOffsets> {
        let topic = expected.topic.as_str();
        // The allowance of a wide step: the plan's partitions, whatever each attempt decides.
        let width = expected.partitions.len();
        let what = format!("deleting records of {topic} on {width} partitions");
        let extra = (width as u64).saturating_mul(DELETE_MS_PER_PARTITION);
        let mut deadline = Deadline::start_wide(&mut self.caps, FIRST_BACKOFF_MS, extra);
        loop {
            // A retry is a new decision: whatever failed before (an unknown topic, a timeout, a
            // lost connection, a moved leader), the topic may have been recreated meanwhile.
            // The caller decides on this description, and the request follows it directly.
            let found = self
                .describe_known(&[topic], names, with_ranges)?
                .into_iter()
                .next()
                .flatten()
                .map(state);
            // Identity first: a decision about another topic's offsets (a recreated topic's
            // empty ranges, a deleted topic's none) would name the wrong cause.
            check_identity(
                &expected.topic,
                &expected.topic_id,
                &expected.partitions,
                found.as_ref().map(|s| &s.description),
                "immediately before DeleteRecords",
            )?;
            let before = decide(found.as_ref())?;
            match self.caps.delete_records(topic, &before) {
                Ok(answer) => return Ok(answer.into_iter().collect()),
                // Unknown-topic too: a partition electing a leader answers it, and the identity
                // check of the next attempt tells that from a topic that is really gone.
                Err(error)
                    if (error.kind.is_transient() || error.kind == ErrorKind::UnknownTopic)
                        && {
                            deadline.report(&mut self.caps, || {
                                CleanupError::Kafka(failure("delete-records", &what, error.clone()))
                                    .to_string()
                            });
                            deadline.wait(&mut self.caps)
                        } => {}
                Err(error) => {
                    let timed_out = error.kind.is_transient();
                    let mut failed = failure("delete-records", &what, error);
                    if timed_out {
                        failed
                            .message
                            .push_str(&self.still_pending(topic, &before, &deadline));
                    }
                    return Err(failed.into());
                }
            }
        }
    }

    /// After a DeleteRecords step ran out of time: how long it was allowed, which partitions
    /// still begin below their target (one listing, not retried: the step already failed), and
    /// what to do about a delete this wide.
    fn still_pending(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
        deadline: &Deadline,
    ) -> String {
        let partitions = before.partitions();
        let allowed = format!(
            "; the step was allowed {:.1} s (the operation timeout plus {DELETE_MS_PER_PARTITION} ms for each of its {} partitions)",
            deadline.allowed as f64 / 1000.0,
            partitions.len()
        );
        let hint = "; a delete this wide may need a longer operation timeout (CLI: --timeout)";
        let beginnings: PartitionOffsets =
            match self
                .caps
                .list_offsets(topic, &partitions, OffsetSpec::Earliest)
            {
                Ok(answer) => answer.into_iter().collect(),
                Err(_) => {
                    return format!(
                        "{allowed}; which partitions are still pending could not be read{hint}"
                    );
                }
            };
        let pending: Vec<(u32, Option<u64>, u64)> = before
            .iter()
            .filter_map(|(p, target)| {
                let beginning = beginnings.get(p);
                beginning
                    .is_none_or(|b| b < target)
                    .then_some((p, beginning, target))
            })
            .collect();
        if pending.is_empty() {
            return format!(
                "{allowed}; every partition now begins at or past its target, so the deletion completed after all{hint}"
            );
        }
        let shown: Vec<String> = pending
            .iter()
            .take(5)
            .map(|(p, beginning, target)| match beginning {
                Some(b) => format!("{topic}-{p} at {b}, target {target}"),
                None => format!("{topic}-{p} (beginning unknown), target {target}"),
            })
            .collect();
        let more = match pending.len() {
            n if n > 5 => format!(" and {} more", n - 5),
            _ => String::new(),
        };
        format!(
            "{allowed}; {} of {} partitions still begin below their target ({}{more}){hint}",
            pending.len(),
            partitions.len(),
            shown.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{DELETE_MS_PER_PARTITION, delete_request_bound_ms};

    #[test]
    fn a_delete_request_is_bounded_by_the_partitions_it_carries() {
        // The default: a 30 s operation timeout, 10 s per request.
        assert_eq!(delete_request_bound_ms(10_000, 0), 10_000);
        assert_eq!(delete_request_bound_ms(10_000, 1), 10_005);
        // 10,000 partitions on one leader: 60 s, inside the step's 30 s + 50 s with 20 s left
        // for the describe and a retry.
        let bound = delete_request_bound_ms(10_000, 10_000);
        assert_eq!(bound, 60_000);
        let step = 30_000 + 10_000 * DELETE_MS_PER_PARTITION;
        assert!(step - bound >= 20_000, "{step} {bound}");
        assert_eq!(delete_request_bound_ms(u64::MAX, 3), u64::MAX);
        assert_eq!(delete_request_bound_ms(1_000, usize::MAX), u64::MAX);
    }
}

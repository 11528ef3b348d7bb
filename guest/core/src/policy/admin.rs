//! The admin side of the policy: describes (asked again while a topic known to exist is still
//! propagating), the cluster's description, topic creation, offset listings and the
//! DeleteRecords step that follows the describe it was decided on.

use super::{Deadline, FIRST_BACKOFF_MS, Policy, contract, failure};
use crate::capabilities::{Capabilities, ErrorKind, TopicMetadata};
use crate::error::{CleanupError, KafkaError, Result};
use crate::kafka_types::{
    ClusterDescription, ConfigEntry, KafkaResult, OffsetSpec, PartitionRange, TopicDescription,
    TopicState,
};
use crate::offsets::PartitionOffsets;
use crate::topics::check_identity;

/// How much longer than the operation timeout a DeleteRecords step may take, per partition it
/// deletes on. Kafka answers a DeleteRecords only once every replica of every partition moved
/// its log start: 9 s for 5,000 partitions at replication factor 3 on a loaded 3-node cluster
/// (about 2 ms per partition), past a third of the default 30 s timeout at 10,000. A request cut
/// short is not lost (the leaders moved their log starts; the retry, after the identity check,
/// waits only for what is left), but the step needs the time.
pub const DELETE_MS_PER_PARTITION: u64 = 5;

impl<C: Capabilities> Policy<C> {
    /// Describes topics (with each one's replica count) and reads their configuration in one
    /// round trip.
    pub fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        self.inspect(topics, names, false)
    }

    /// `inspect_topics` with every partition's range (beginning, end) from the same round trip:
    /// one call where a describe and two offset listings would be three.
    pub fn inspect_ranges(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        self.inspect(topics, names, true)
    }

    /// The cluster's brokers and the named configuration entries of one of them.
    pub fn describe_cluster(&mut self, names: &[&str]) -> KafkaResult<ClusterDescription> {
        let op = "describe-cluster";
        let mut answer = self.retry(op, "describing the cluster", |c| c.describe_cluster(names))?;
        answer.brokers.sort_unstable();
        answer.brokers.dedup();
        if answer.brokers.is_empty() {
            return Err(contract(
                op,
                "the cluster's description lists no broker".into(),
            ));
        }
        if answer.configs.len() != names.len() {
            return Err(contract(
                op,
                format!(
                    "{} broker configuration entries for {} names",
                    answer.configs.len(),
                    names.len()
                ),
            ));
        }
        Ok(answer)
    }

    /// Beginning and end of each partition in one round trip. The default lists them in turn.
    pub fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> KafkaResult<Vec<PartitionRange>> {
        let answer = self.describe_known(&[topic], &[], true)?;
        let ranges = answer
            .into_iter()
            .next()
            .flatten()
            .map(|m| m.offsets)
            .unwrap_or_default();
        let asked: std::collections::BTreeSet<u32> = partitions.iter().copied().collect();
        Ok(ranges
            .into_iter()
            .filter(|r| asked.contains(&r.partition))
            .map(|r| (r.partition, r.beginning, r.end))
            .collect())
    }

    /// Describes each topic in one request; `None` for a topic that does not exist.
    pub fn describe_topics(
        &mut self,
        topics: &[&str],
    ) -> KafkaResult<Vec<Option<TopicDescription>>> {
        Ok(self
            .describe_known(topics, &[], false)?
            .into_iter()
            .map(|m| m.map(description))
            .collect())
    }

    /// Sends the creation of a topic and returns without waiting until metadata shows it;
    /// `Ok(false)` when it already existed. Whatever next asks about the topic waits for it
    /// instead, so the caller can do other work meanwhile (apply fences its control topic's
    /// writer while the topic it just created propagates). The default creates and waits.
    pub fn request_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let created = self.retry("create-topic", &format!("creating {topic}"), |c| {
            c.create_topic(topic, partitions, replication_factor, configs)
        })?;
        // Whoever created it, it exists: every later describe and partition request waits for
        // it to propagate instead of taking it for missing.
        self.known.push(topic.to_owned());
        self.requested.push((topic.to_owned(), partitions));
        Ok(created)
    }

    pub fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<PartitionOffsets> {
        let answer = self.retry_partitions(
            "list-offsets",
            &format!("listing offsets of {topic}"),
            topic,
            |c| c.list_offsets(topic, partitions, spec),
        )?;
        Ok(answer.into_iter().collect())
    }

    /// Deletes every record below offsets decided from the description each attempt is sent
    /// after, on the physical topic `expected` (its name, ID and partitions); returns the
    /// resulting beginnings (low watermarks) Kafka reported. Every attempt describes
    /// `expected.topic` (with the configuration entries `names` and, with `with_ranges`, every
    /// partition's range), hands the answer (`None`: the topic is missing) to `decide`, which
    /// checks it and returns the offsets to delete below or refuses, and sends the delete only
    /// once the identity is confirmed too. A retry describes and decides again. `decide` is the
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
            let before = decide(found.as_ref())?;
            check_identity(
                &expected.topic,
                &expected.topic_id,
                &expected.partitions,
                found.as_ref().map(|s| &s.description),
                "immediately before DeleteRecords",
            )?;
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

    /// `with_offsets`.
    fn inspect(
        &mut self,
        topics: &[&str],
        names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        Ok(self
            .describe_known(topics, names, with_offsets)?
            .into_iter()
            .map(|meta| meta.map(state))
            .collect())
    }

    /// `describe`, asked again while a topic known to exist is missing (until the deadline).
    pub(super) fn describe_known(
        &mut self,
        topics: &[&str],
        names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let mut deadline = Deadline::start(&mut self.caps);
        let what = format!("describing {}", topics.join(", "));
        loop {
            let answer = self.retry("describe", &what, |c| {
                c.describe(topics, names, with_offsets)
            })?;
            if answer.len() != topics.len() {
                return Err(contract(
                    "describe",
                    format!("{} answers for {} topics", answer.len(), topics.len()),
                ));
            }
            // A topic this run created or waited for is still propagating when a broker does
            // not know it yet, or knows it but not yet its configuration (every topic has a
            // value for every configuration name; a missing one is a lagging answer).
            let unseen = topics.iter().zip(&answer).any(|(t, a)| {
                let lagging = self.known.iter().any(|k| k == t)
                    && a.as_ref()
                        .is_none_or(|m| m.configs.iter().any(|c| c.value.is_none()));
                // A topic this run requested is propagating until it shows every partition.
                let partial = self.requested.iter().any(|(r, partitions)| {
                    r == t
                        && a.as_ref()
                            .is_none_or(|m| m.partitions.len() < *partitions as usize)
                });
                lagging || partial
            });
            if !unseen || !deadline.wait(&mut self.caps) {
                for (topic, found) in topics.iter().zip(&answer) {
                    if found.is_some() && !self.seen.iter().any(|t| t == topic) {
                        self.seen.push((*topic).to_owned());
                    }
                }
                return checked(answer, names.len(), with_offsets);
            }
        }
    }

    /// Waits until `topic` shows `partitions` partitions in metadata (creation propagates

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

/// Checks the shape of a `describe` answer and normalises partition lists.
fn checked(
    answer: Vec<Option<TopicMetadata>>,
    names: usize,
    with_offsets: bool,
) -> KafkaResult<Vec<Option<TopicMetadata>>> {
    answer
        .into_iter()
        .map(|meta| {
            let Some(mut meta) = meta else {
                return Ok(None);
            };
            meta.partitions.sort_unstable();
            meta.partitions.dedup();
            meta.offsets.sort_unstable_by_key(|r| r.partition);
            if meta.configs.len() != names {
                return Err(contract(
                    "describe",
                    format!(
                        "{} configuration entries of topic {} for {names} names",
                        meta.configs.len(),
                        meta.topic
                    ),
                ));
            }
            // Both lists are sorted now: a binary search per partition keeps a wide topic's
            // check n·log n.
            let unanswered = with_offsets
                .then(|| {
                    meta.partitions.iter().find(|p| {
                        meta.offsets
                            .binary_search_by_key(*p, |r| r.partition)
                            .is_err()
                    })
                })
                .flatten();
            if let Some(partition) = unanswered {
                return Err(KafkaError::new(
                    "describe",
                    format!(
                        "Kafka did not return the offsets of partition {partition} of topic {}",
                        meta.topic
                    ),
                    true,
                ));
            }
            Ok(Some(meta))
        })
        .collect()
}

fn description(meta: TopicMetadata) -> TopicDescription {
    TopicDescription {
        topic: meta.topic,
        topic_id: meta.topic_id,
        partitions: meta.partitions,
    }
}

/// A `describe` answer as the protocols read it: ranges only when offsets were asked for.
fn state(mut meta: TopicMetadata) -> TopicState {
    TopicState {
        configs: std::mem::take(&mut meta.configs),
        replication_factor: meta.replication_factor,
        ranges: std::mem::take(&mut meta.offsets)
            .into_iter()
            .map(|r| (r.partition, r.beginning, r.end))
            .collect(),
        description: description(meta),
    }
}

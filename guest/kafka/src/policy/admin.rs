//! The admin side of the policy: describes (asked again while a topic known to exist is still
//! propagating), the cluster's description, topic creation and offset listings.

use super::{Deadline, Policy, contract};
use crate::capabilities::{Capabilities, Kafka, TopicMetadata};
use crate::kafka_types::{
    ClusterDescription, ConfigEntry, OffsetSpec, PartitionRange, PolicyResult, TopicDescription,
    TopicState,
};
use action_state_format::error::KafkaFailure;
use action_state_format::offsets::PartitionOffsets;

impl<C: Capabilities> Policy<C> {
    /// Describes topics (with each one's replica count) and reads their configuration in one
    /// round trip.
    pub fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> PolicyResult<Vec<Option<TopicState>>> {
        self.inspect(topics, names, false)
    }

    /// `inspect_topics` with every partition's range (beginning, end) from the same round trip:
    /// one call where a describe and two offset listings would be three.
    pub fn inspect_ranges(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> PolicyResult<Vec<Option<TopicState>>> {
        self.inspect(topics, names, true)
    }

    /// The cluster's brokers and the named configuration entries of one of them.
    pub fn describe_cluster(&mut self, names: &[&str]) -> PolicyResult<ClusterDescription> {
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

    /// Beginning and end of each of `partitions` in one round trip (a describe with offsets).
    pub fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> PolicyResult<Vec<PartitionRange>> {
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
            .collect())
    }

    /// Describes each topic in one request; `None` for a topic that does not exist.
    pub fn describe_topics(
        &mut self,
        topics: &[&str],
    ) -> PolicyResult<Vec<Option<TopicDescription>>> {
        Ok(self
            .describe_known(topics, &[], false)?
            .into_iter()
            .map(|m| m.map(description))
            .collect())
    }

    /// Sends the creation of a topic and returns without waiting until metadata shows it;
    /// `Ok(false)` when it already existed. Whatever next asks about the topic waits for it
    /// instead, so the caller can do other work meanwhile (apply fences its control topic's
    /// writer while the topic it just created propagates).
    pub fn request_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> PolicyResult<bool> {
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
    ) -> PolicyResult<PartitionOffsets> {
        let answer = self.retry_partitions(
            "list-offsets",
            &format!("listing offsets of {topic}"),
            topic,
            |c| c.list_offsets(topic, partitions, spec),
        )?;
        Ok(answer.into_iter().collect())
    }

    /// The described topics as the protocols read them, with each partition's range when
    /// `with_offsets`.
    fn inspect(
        &mut self,
        topics: &[&str],
        names: &[&str],
        with_offsets: bool,
    ) -> PolicyResult<Vec<Option<TopicState>>> {
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
    ) -> PolicyResult<Vec<Option<TopicMetadata>>> {
        let mut deadline = Deadline::start(&mut self.caps);
        let what = format!("describing {}", topics.join(", "));
        // A topic whose creation this run sent exists, whoever created it: a broker that knows
        // its name but not yet its partitions answers unknown-topic (librdkafka's ListOffsets
        // for the partition), which is propagation, asked again until the deadline.
        let exists = topics.iter().any(|t| self.known.iter().any(|k| k == t));
        loop {
            let answer = self.retry_on("describe", &what, exists, |c| {
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
}

/// Checks the shape of a `describe` answer and normalises partition lists.
fn checked(
    answer: Vec<Option<TopicMetadata>>,
    names: usize,
    with_offsets: bool,
) -> PolicyResult<Vec<Option<TopicMetadata>>> {
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
                return Err(KafkaFailure::new(
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
pub(super) fn state(mut meta: TopicMetadata) -> TopicState {
    TopicState {
        configs: std::mem::take(&mut meta.configs),
        replication_factor: meta.replication_factor,
        ranges: std::mem::take(&mut meta.offsets),
        description: description(meta),
    }
}

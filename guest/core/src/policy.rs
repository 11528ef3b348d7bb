//! Every Kafka policy of the component, written once over the plain 0.3 capabilities: deadlines
//! and back-off over the imported clock, what each error case means, waiting until a created
//! topic is visible and an appended record is stable, the control-log read loop, the
//! transactional id, and strict decoding of control records. `Policy` implements `KafkaOps`, the
//! operations the apply and recovery protocols are written against.

use crate::capabilities::{CapResult, Capabilities, Consumer, ErrorKind, HostError, Writer};
use crate::classified::Classified;
use crate::control::ControlEntry;
use crate::error::{CleanupError, KafkaError, Result};
use crate::offsets::PartitionOffsets;
use crate::ops::{
    AppendError, ClusterDescription, ConfigEntry, KafkaOps, KafkaResult, OffsetSpec,
    PartitionRange, TopicDescription, TopicState,
};
use crate::topics::check_identity;

/// The transactional id of a control topic's writer: one per control topic, the same in every
/// host and every earlier version, so that any two writers of one control topic fence each other.
pub fn transactional_id(control_topic: &str) -> String {
    format!("action-state-cleanup:{control_topic}")
}

/// First back-off after a transient error; it doubles up to `MAX_BACKOFF_MS`.
const FIRST_BACKOFF_MS: u32 = 20;
/// The first wait for a committed record to become visible: the transaction's markers usually
/// land within a few milliseconds of the commit, so a 20 ms first wait would be most of an
/// apply's time on a healthy cluster.
const STABLE_FIRST_BACKOFF_MS: u32 = 2;
const MAX_BACKOFF_MS: u32 = 500;
/// How long one poll of the control topic waits for records.
const CONTROL_POLL_MS: u32 = 100;
const CONTROL_POLL_RECORDS: u32 = 500;

/// How long a failing step stays quiet before the operator hears that it is being retried,
/// and then between two such reports: a leader change retried within milliseconds says nothing.
const RETRY_REPORT_MS: u64 = 1_000;

/// How much longer than the operation timeout a DeleteRecords step may take, per partition it
/// deletes on. Kafka answers a DeleteRecords only once every replica of every partition moved
/// its log start: 9 s for 5,000 partitions at replication factor 3 on a loaded 3-node cluster
/// (about 2 ms per partition), past a third of the default 30 s timeout at 10,000. A request cut
/// short is not lost (the leaders moved their log starts; the retry, after the identity check,
/// waits only for what is left), but the step needs the time.
pub const DELETE_MS_PER_PARTITION: u64 = 5;
/// How much longer than the operation timeout an append step (the append and the wait until
/// readers see it) may take, per KiB of its record: a wide plan's control record holds every
/// partition's offset (about 120 KiB at 10,000 partitions).
pub const APPEND_MS_PER_KIB: u64 = 50;

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
        Deadline::start_with(caps, FIRST_BACKOFF_MS)
    }

    fn start_with<C: Capabilities>(caps: &mut C, first_backoff_ms: u32) -> Self {
        Deadline::start_wide(caps, first_backoff_ms, 0)
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

/// A host error as the failure of a step: retriable when the cluster may answer differently later.
fn failure(operation: &str, what: &str, error: HostError) -> KafkaError {
    let retriable =
        error.kind.is_transient() || matches!(error.kind, ErrorKind::Fenced | ErrorKind::Other);
    KafkaError {
        operation: operation.to_owned(),
        message: format!("{what}: {} ({})", error, error.kind.name()),
        retriable,
        cause: Some(error),
    }
}

/// An answer that breaks the capability contract (wrong count, missing partition).
fn contract(operation: &str, why: String) -> KafkaError {
    KafkaError::new(
        operation,
        format!("the host broke the capability contract: {why}"),
        false,
    )
}

struct ControlWriter<W> {
    topic: String,
    writer: W,
    /// This writer can never append again: a newer writer took over, or a transaction of it
    /// failed in a way only a new writer settles.
    fenced: bool,
}

/// `KafkaOps` over plain capabilities.
pub struct Policy<C: Capabilities> {
    /// The host's capabilities, their errors classified by the core's table of protocol codes
    /// before any rule here reads a case (`kafka_codes`).
    caps: Classified<C>,
    /// The transactional writer of the control topic this run fenced.
    control_writer: Option<ControlWriter<Classified<C::Writer>>>,
    /// An idempotent writer, for records that need no fencing once the fenced one is gone.
    plain_writer: Option<Classified<C::Writer>>,
    /// The consumer that reads the control topic, kept between reads.
    control_reader: Option<(String, Classified<C::Consumer>)>,
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
            known: Vec::new(),
            requested: Vec::new(),
            seen: Vec::new(),
        }
    }

    pub fn capabilities(&mut self) -> &mut C {
        &mut self.caps.0
    }

    /// Runs `call` until it succeeds, fails with a non-transient error, or the deadline passes
    /// (transient: timeout, transport, not-leader; each retry asks again, which refreshes the
    /// client's metadata).
    fn retry<T>(
        &mut self,
        operation: &str,
        what: &str,
        call: impl FnMut(&mut Classified<C>) -> CapResult<T>,
    ) -> KafkaResult<T> {
        self.retry_on(operation, what, false, call)
    }

    /// `retry` for a request about the partitions of `topic`: when this run saw the topic
    /// exist, an unknown-topic answer is transient too (a partition without a leader yet).
    fn retry_partitions<T>(
        &mut self,
        operation: &str,
        what: &str,
        topic: &str,
        call: impl FnMut(&mut Classified<C>) -> CapResult<T>,
    ) -> KafkaResult<T> {
        let exists = self.seen.iter().chain(&self.known).any(|t| t == topic);
        self.retry_on(operation, what, exists, call)
    }

    fn retry_on<T>(
        &mut self,
        operation: &str,
        what: &str,
        unknown_is_transient: bool,
        mut call: impl FnMut(&mut Classified<C>) -> CapResult<T>,
    ) -> KafkaResult<T> {
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

    /// The described topics as the protocols read them, with each partition's range when
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
    fn describe_known(
        &mut self,
        topics: &[&str],
        names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<crate::capabilities::TopicMetadata>>> {
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
    /// asynchronously, also when a concurrent creator made it).
    fn await_visible(&mut self, topic: &str, partitions: u32) -> KafkaResult<()> {
        let mut deadline = Deadline::start(&mut self.caps);
        loop {
            let answer = self.retry("create-topic", &format!("describing {topic}"), |c| {
                c.describe(&[topic], &[], false)
            })?;
            let seen = answer
                .first()
                .and_then(Option::as_ref)
                .map_or(0, |m| m.partitions.len());
            if seen == partitions as usize {
                self.known.push(topic.to_owned());
                return Ok(());
            }
            if !deadline.wait(&mut self.caps) {
                return Err(KafkaError::new(
                    "create-topic",
                    format!(
                        "Kafka topic {topic} was created but did not appear with {partitions} partitions in metadata in time"
                    ),
                    true,
                ));
            }
        }
    }

    /// Waits until read_committed readers see `offset` of partition 0 (the transaction marker
    /// follows the commit), so every later read sees the record.
    fn await_stable(&mut self, topic: &str, offset: u64, bytes: usize) -> KafkaResult<()> {
        let extra = append_allowance(bytes);
        let mut deadline = Deadline::start_wide(&mut self.caps, STABLE_FIRST_BACKOFF_MS, extra);
        let what = format!("waiting for offset {offset} of {topic} to become visible");
        loop {
            let answer = self.retry_partitions("append-control", &what, topic, |c| {
                c.list_offsets(topic, &[0], OffsetSpec::Latest)
            })?;
            if answer.iter().any(|(p, end)| *p == 0 && *end > offset) {
                return Ok(());
            }
            if !deadline.wait(&mut self.caps) {
                return Err(KafkaError::new(
                    "append-control",
                    format!(
                        "the record at offset {offset} of control topic {topic} was committed but did not become visible in time"
                    ),
                    true,
                ));
            }
        }
    }

    /// Appends with the idempotent writer. A transient failure (the partition's leader died or
    /// moved, the request timed out) is retried with a new writer until the deadline: the
    /// record may already be in the log, and a second copy is harmless because APPLIED records
    /// restate a status (SPEC §7 accepts APPLIED after APPLIED).
    fn plain_append(&mut self, topic: &str, key: &str, value: &str) -> KafkaResult<u64> {
        let extra = append_allowance(value.len());
        let mut deadline = Deadline::start_wide(&mut self.caps, FIRST_BACKOFF_MS, extra);
        loop {
            if self.plain_writer.is_none() {
                let writer =
                    self.retry("append-control", "opening an idempotent producer", |c| {
                        c.open_writer(None)
                    })?;
                self.plain_writer = Some(writer);
            }
            let writer = self.plain_writer.as_mut().ok_or_else(|| {
                KafkaError::new("append-control", "no idempotent producer", false)
            })?;
            match writer.append(topic, 0, key, value) {
                Ok(offset) => return Ok(offset),
                Err(error) if error.kind.is_transient() && deadline.wait(&mut self.caps) => {
                    // A producer whose request timed out may still hold the dead leader.
                    self.plain_writer = None;
                }
                Err(error) => {
                    self.plain_writer = None;
                    return Err(failure(
                        "append-control",
                        &format!("appending to {topic}"),
                        error,
                    ));
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

    /// `plain_append`, returning once read_committed readers see the record.
    fn stable_plain_append(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
    ) -> std::result::Result<u64, AppendError> {
        let offset = self
            .plain_append(topic, key, value)
            .map_err(AppendError::Failed)?;
        self.await_stable(topic, offset, value.len())
            .map_err(AppendError::Failed)?;
        Ok(offset)
    }

    /// Partition 0's beginning and end of the control topic, from one describe (its range
    /// comes with the partitions); a missing answer is refused. A topic this run saw or made
    /// that a broker does not know yet is asked for again until the deadline.
    fn control_range(&mut self, topic: &str) -> KafkaResult<(u64, u64)> {
        let mut deadline = Deadline::start(&mut self.caps);
        loop {
            let found = self
                .describe_known(&[topic], &[], true)?
                .into_iter()
                .next()
                .flatten();
            let Some(meta) = found else {
                let exists = self.seen.iter().chain(&self.known).any(|t| t == topic);
                if exists && deadline.wait(&mut self.caps) {
                    continue;
                }
                return Err(KafkaError::new(
                    "read-control-log",
                    format!(
                        "Kafka cleanup control topic {topic} does not exist; its history cannot be read"
                    ),
                    exists,
                ));
            };
            return meta
                .offsets
                .iter()
                .find(|r| r.partition == 0)
                .map(|r| (r.beginning, r.end))
                .ok_or_else(|| {
                    KafkaError::new(
                        "read-control-log",
                        format!(
                            "Kafka did not return the offsets of partition 0 of control topic {topic}; its history cannot be read"
                        ),
                        true,
                    )
                });
        }
    }
}

/// The allowance of an append of `bytes` bytes beyond the operation timeout.
fn append_allowance(bytes: usize) -> u64 {
    (bytes as u64 / 1024).saturating_mul(APPEND_MS_PER_KIB)
}

/// Checks the shape of a `describe` answer and normalises partition lists.
fn checked(
    answer: Vec<Option<crate::capabilities::TopicMetadata>>,
    names: usize,
    with_offsets: bool,
) -> KafkaResult<Vec<Option<crate::capabilities::TopicMetadata>>> {
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

fn description(meta: crate::capabilities::TopicMetadata) -> TopicDescription {
    TopicDescription {
        topic: meta.topic,
        topic_id: meta.topic_id,
        partitions: meta.partitions,
    }
}

/// A `describe` answer as the protocols read it: ranges only when offsets were asked for.
fn state(mut meta: crate::capabilities::TopicMetadata) -> TopicState {
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

/// A control record's bytes that are not text are corruption (SPEC §7), never decoded lossily.
fn control_entry(topic: &str, record: crate::capabilities::PolledRecord) -> Result<ControlEntry> {
    if !record.utf8 {
        return Err(CleanupError::ControlTopicCorrupt(format!(
            "Cleanup control record at offset {} of {topic} is not valid UTF-8",
            record.offset
        )));
    }
    let key = record.key.filter(|_| record.has_key);
    let value = record.value.filter(|_| record.has_value);
    if (record.has_key && key.is_none()) || (record.has_value && value.is_none()) {
        return Err(CleanupError::Kafka(contract(
            "read-control-log",
            format!("record at offset {} came without its data", record.offset),
        )));
    }
    Ok(ControlEntry {
        offset: record.offset,
        key,
        value,
    })
}

impl<C: Capabilities> KafkaOps for Policy<C> {
    fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        self.inspect(topics, names, false)
    }

    fn inspect_ranges(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        self.inspect(topics, names, true)
    }

    fn describe_cluster(&mut self, names: &[&str]) -> KafkaResult<ClusterDescription> {
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

    fn offset_range(
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

    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>> {
        Ok(self
            .describe_known(topics, &[], false)?
            .into_iter()
            .map(|m| m.map(description))
            .collect())
    }

    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>> {
        Ok(self
            .describe_known(topics, names, false)?
            .into_iter()
            .map(|m| m.map(|m| m.configs).unwrap_or_default())
            .collect())
    }

    fn request_topic(
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

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let created = self.retry("create-topic", &format!("creating {topic}"), |c| {
            c.create_topic(topic, partitions, replication_factor, configs)
        })?;
        // Whoever created it, it is used right after: wait until metadata shows it.
        self.await_visible(topic, partitions)?;
        Ok(created)
    }

    fn list_offsets(
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

    fn delete_records(
        &mut self,
        expected: &TopicDescription,
        before: &PartitionOffsets,
    ) -> Result<PartitionOffsets> {
        self.delete_described(expected, &[], false, &mut |_| Ok(before.clone()))
    }

    fn delete_described(
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

    fn read_control_log(&mut self, topic: &str) -> Result<Vec<ControlEntry>> {
        let (beginning, end) = self.control_range(topic)?;
        self.read_control_range(topic, beginning, end)
    }

    fn read_control_range(
        &mut self,
        topic: &str,
        beginning: u64,
        end: u64,
    ) -> Result<Vec<ControlEntry>> {
        let mut entries = Vec::new();
        if end <= beginning {
            return Ok(entries);
        }
        let op = "read-control-log";
        if self.control_reader.as_ref().is_none_or(|(t, _)| t != topic) {
            let consumer = self.retry(op, &format!("opening a consumer of {topic}"), |c| {
                c.open_consumer(topic)
            })?;
            self.control_reader = Some((topic.to_owned(), consumer));
        }
        let Some((_, reader)) = self.control_reader.as_mut() else {
            return Err(KafkaError::new(op, "no control-topic consumer", false).into());
        };
        let start: PartitionOffsets = [(0, beginning)].into_iter().collect();
        let mut deadline = Deadline::start(&mut self.caps);
        let mut assigned = false;
        let mut position = beginning;
        while position < end {
            if deadline.passed(&mut self.caps) {
                return Err(KafkaError::new(
                    op,
                    format!(
                        "Reading control topic {topic} timed out at offset {position} of {end}"
                    ),
                    true,
                )
                .into());
            }
            if !assigned {
                match reader.assign(&start) {
                    Ok(()) => assigned = true,
                    Err(e) if e.kind.is_transient() => {
                        deadline.wait(&mut self.caps);
                        continue;
                    }
                    Err(e) => return Err(failure(op, &format!("reading {topic}"), e).into()),
                }
            }
            match reader.poll(CONTROL_POLL_RECORDS, CONTROL_POLL_MS, true) {
                Ok(records) => {
                    for record in records.into_records() {
                        if record.partition != 0 || record.offset < position {
                            continue;
                        }
                        position = record.offset + 1;
                        if record.offset < end {
                            entries.push(control_entry(topic, record)?);
                        }
                    }
                }
                // A broker died or a leader moved: the client reconnects; keep reading until
                // the deadline.
                Err(e) if e.kind.is_transient() => {
                    deadline.wait(&mut self.caps);
                }
                // The client's lookup of a group this reader never uses: read on, after the
                // back-off, so that a host repeating it cannot make this a busy loop.
                Err(e) if e.is_unused_group_refusal() => {
                    deadline.wait(&mut self.caps);
                }
                Err(e) => return Err(failure(op, &format!("reading {topic}"), e).into()),
            }
            // Transaction markers occupy offsets but are never delivered: trust the consumer's
            // position once it fetched past them.
            if let Ok(positions) = reader.position()
                && let Some(next) = positions.get(0)
            {
                position = position.max(next);
            }
        }
        Ok(entries)
    }

    fn pause(&mut self, ms: u32) {
        self.caps.sleep_ms(ms);
    }

    fn fence_control(&mut self, topic: &str) -> KafkaResult<()> {
        self.control_writer = None;
        let id = transactional_id(topic);
        let writer = self.retry(
            "fence-control",
            &format!("initialising the transactional producer {id}"),
            |c| c.open_writer(Some(&id)),
        )?;
        self.control_writer = Some(ControlWriter {
            topic: topic.to_owned(),
            writer,
            fenced: false,
        });
        Ok(())
    }

    fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> std::result::Result<u64, AppendError> {
        let usable = self
            .control_writer
            .as_mut()
            .filter(|w| w.topic == topic && !w.fenced);
        let Some(writer) = usable else {
            if fenced {
                return Err(AppendError::Fenced(format!(
                    "this run holds no transactional writer of control topic {topic}"
                )));
            }
            return self.stable_plain_append(topic, key, value);
        };
        match writer.writer.append(topic, 0, key, value) {
            Ok(offset) => {
                self.await_stable(topic, offset, value.len())
                    .map_err(AppendError::Failed)?;
                Ok(offset)
            }
            Err(error) if error.kind == ErrorKind::Fenced => {
                writer.fenced = true;
                if fenced {
                    return Err(AppendError::Fenced(error.to_string()));
                }
                // Records that need no fencing are still written, by an idempotent producer.
                self.control_writer = None;
                self.stable_plain_append(topic, key, value)
            }
            // A record that needs no fence (APPLIED) is not lost with the transaction's answer,
            // whatever went wrong with it: the idempotent writer writes it, retrying until the
            // deadline (a duplicate of a transaction that did commit is harmless), and its own
            // error is the one reported. A transactional writer that failed this way is not
            // used again: its transaction may be left in a state only a new writer settles
            // (a broker has answered EndTxn with UNKNOWN_SERVER_ERROR when a concurrent apply's
            // fencing raced the commit).
            // The failed writer is dropped first (its open transaction must not hold back what
            // read_committed readers see), and the record is waited for like any other, so
            // that a `status` after this apply shows it.
            Err(_) if !fenced => {
                self.control_writer = None;
                self.stable_plain_append(topic, key, value)
            }
            Err(error) => Err(AppendError::Failed(failure(
                "append-control",
                &format!("appending to control topic {topic}"),
                error,
            ))),
        }
    }
}

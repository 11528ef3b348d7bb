//! F, the floor of the apply benchmark (goal 2): the Kafka operations an apply needs, issued
//! straight through librdkafka with fresh clients and none of the core's checks, retries or
//! waits: the cost of the Kafka work itself, measured on the same broker in the same rounds;
//! goal 2 asks the component's apply to stay within 3× of it.
//!
//! Metadata and offsets go through the host's `ffi` module (librdkafka's DescribeTopics and
//! ListOffsets, which rdkafka's safe API lacks: one request for both topics, and the beginnings
//! and ends of all partitions in flight at once) — plain C calls with no policy in them. The
//! producers, the consumer and DeleteRecords are rdkafka's own. The producers get the settings
//! the host's writer uses (no linger, dense connections): the floor measures the operations,
//! not librdkafka's defaults.

use std::time::{Duration, Instant};

use action_state_cleanup::kafka::ffi;
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};
use action_state_format::offsets::PartitionOffsets;
use action_state_kafka::policy::transactional_id;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::Message as _;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer as _};
use rdkafka::{Offset, TopicPartitionList};

use crate::stats::{Laps, Timing};
use crate::{R, fail};

/// Which floor operation stands for which capability of the core: the analysis compares the
/// native side's time per capability with these. A capability without an entry here, or whose
/// operations a scenario's floor does not run, is work the floor skips.
pub const COUNTERPARTS: [(&str, &[&str]); 5] = [
    ("describe", &["metadata", "list-offsets"]),
    ("open-writer", &["init-transactions"]),
    ("append", &["transaction", "record"]),
    ("delete-records", &["delete-records"]),
    ("poll", &["read-control-log"]),
];

/// The floor's own data topic and control topic (the other runners' later rounds must not see
/// its deletions and records).
pub struct Target<'a> {
    pub data: &'a str,
    pub control: &'a str,
}

/// What a fresh or resumed floor run writes: where the plan deletes to, and the control records
/// an apply of the plan writes (key = plan ID; COMMITTED and APPLIED values).
pub struct Step<'a> {
    pub before: &'a PartitionOffsets,
    pub key: &'a str,
    pub committed: &'a str,
    pub applied: &'a str,
}

/// The clients of one run. Like an apply's, they are created inside the timed run and dropped
/// after its time is taken (destroying librdkafka clients waits for their threads): each run
/// function below computes `laps.finish()` before its locals, the clients, drop.
struct Clients {
    config: ClientConfig,
    timeout: Duration,
    runtime: tokio::runtime::Runtime,
    admin: AdminClient<DefaultClientContext>,
}

impl Clients {
    fn new(settings: &KafkaSettings) -> R<Self> {
        let config = KafkaClients::new(settings.clone())?.client_config();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        let admin = config.create()?;
        Ok(Clients {
            config,
            timeout: settings.request_timeout(),
            runtime,
            admin,
        })
    }

    /// One metadata request for both topics; the data topic's partitions.
    fn metadata(&self, target: &Target<'_>) -> R<Vec<u32>> {
        let topics = [target.data.to_owned(), target.control.to_owned()];
        let described = ffi::describe_topics(self.admin.inner(), &topics, self.timeout)
            .map_err(|e| fail(e.message))?;
        match described.into_iter().next().flatten() {
            Some(topic) => Ok(topic.partitions),
            None => Err(fail(format!("floor: topic {} is missing", target.data))),
        }
    }

    /// Creates a control topic as an apply does (one partition, compacted, replication factor
    /// 1), without waiting for its metadata to propagate.
    fn create_control(&self, topic: &str) -> R<()> {
        let new = NewTopic::new(topic, 1, TopicReplication::Fixed(1))
            .set("cleanup.policy", "compact")
            .set("min.insync.replicas", "1");
        let options = AdminOptions::new().request_timeout(Some(self.timeout));
        let results = self
            .runtime
            .block_on(self.admin.create_topics([&new], &options))?;
        for result in results {
            result.map_err(|(topic, code)| fail(format!("floor: creating {topic}: {code}")))?;
        }
        Ok(())
    }

    /// (partition, beginning, end) of every partition.
    fn offset_range(&self, topic: &str, partitions: &[u32]) -> R<Vec<(u32, u64, u64)>> {
        ffi::list_offset_range(self.admin.inner(), topic, partitions, self.timeout)
            .map_err(|e| fail(e.message))
    }

    fn delete_records(&self, topic: &str, before: &[(u32, u64)]) -> R<()> {
        let mut list = TopicPartitionList::with_capacity(before.len());
        for &(partition, offset) in before {
            list.add_partition_offset(topic, partition as i32, Offset::Offset(offset as i64))?;
        }
        let options = AdminOptions::new().request_timeout(Some(self.timeout));
        let result = self
            .runtime
            .block_on(self.admin.delete_records(&list, &options))?;
        for element in result.elements() {
            element.error()?;
        }
        Ok(())
    }

    /// An idempotent producer, or a transactional one with its transactions initialised (the
    /// fencing step of an apply).
    fn producer(&self, transactional_id: Option<&str>) -> R<FutureProducer> {
        let mut config = self.config.clone();
        let millis = self.timeout.as_millis().to_string();
        config
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "0")
            .set("request.timeout.ms", &millis)
            .set("message.timeout.ms", &millis);
        if let Some(id) = transactional_id {
            config
                .set("transactional.id", id)
                .set("enable.sparse.connections", "false");
        }
        let producer: FutureProducer = config.create()?;
        if transactional_id.is_some() {
            producer.init_transactions(self.timeout)?;
        } else {
            // As the host's writer: one metadata request lets the idempotent producer get its
            // producer id before the first send instead of after a 500 ms timer.
            producer.client().fetch_metadata(None, self.timeout)?;
        }
        Ok(producer)
    }

    /// Sends one record to partition 0 and waits for its acknowledgement.
    fn send(&self, producer: &FutureProducer, topic: &str, record: (&str, &str)) -> R<()> {
        let message = FutureRecord::to(topic)
            .partition(0)
            .key(record.0)
            .payload(record.1);
        let delivery = producer.send(message, self.timeout);
        match self.runtime.block_on(delivery) {
            Ok(_) => Ok(()),
            Err((error, _)) => Err(error.into()),
        }
    }

    /// One transaction holding one record.
    fn transaction(&self, producer: &FutureProducer, topic: &str, record: (&str, &str)) -> R<()> {
        producer.begin_transaction()?;
        self.send(producer, topic, record)?;
        producer.commit_transaction(self.timeout)?;
        Ok(())
    }

    /// Reads the control topic from its beginning to its end with one assign-only consumer, as
    /// the apply does: the end is the last stable offset from list-offsets, and reading stops
    /// once the consumer's position reaches it (waiting for librdkafka's end-of-partition event
    /// instead would add an empty fetch held for fetch.wait.max.ms). Returns the consumer (to be
    /// dropped after the timing) and how many records it read.
    fn read_to_end(&self, topic: &str) -> R<(BaseConsumer, u64)> {
        let range = self.offset_range(topic, &[0])?;
        let &(_, beginning, end) = range
            .first()
            .ok_or_else(|| fail(format!("floor: no offsets for {topic}-0")))?;
        let mut config = self.config.clone();
        config
            .set("group.id", "action-state-bench-floor")
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            // As the host's consumer: no 1 s back-off between a fetch and the next.
            .set("fetch.queue.backoff.ms", "10");
        let consumer: BaseConsumer = config.create()?;
        let mut list = TopicPartitionList::with_capacity(1);
        list.add_partition_offset(topic, 0, Offset::Offset(i64::try_from(beginning)?))?;
        consumer.assign(&list)?;
        let deadline = Instant::now() + self.timeout;
        let mut records = 0;
        let mut next = beginning;
        while next < end {
            let wait = deadline.saturating_duration_since(Instant::now());
            if wait.is_zero() {
                return Err(fail(format!("floor: reading {topic} timed out")));
            }
            match consumer.poll(wait.min(Duration::from_millis(100))) {
                Some(Ok(message)) => {
                    records += 1;
                    next = next.max(u64::try_from(message.offset())? + 1);
                }
                Some(Err(error)) => return Err(error.into()),
                None => {}
            }
            // Transaction markers take offsets but are never delivered: trust the position.
            if let Ok(positions) = consumer.position()
                && let Some(Offset::Offset(at)) =
                    positions.find_partition(topic, 0).map(|p| p.offset())
            {
                next = next.max(u64::try_from(at)?);
            }
        }
        Ok((consumer, records))
    }
}

/// The plan's offsets, clamped to what each partition holds: a partition already deleted past
/// them is "deleted" to its current beginning (the request is still sent), and none is asked
/// beyond its end.
fn targets(before: &PartitionOffsets, range: &[(u32, u64, u64)]) -> Vec<(u32, u64)> {
    range
        .iter()
        .filter_map(|&(p, beginning, end)| {
            before
                .get(p)
                .map(|offset| (p, offset.clamp(beginning, end)))
        })
        .collect()
}

/// Writes `committed` to `control` as an apply that stopped right after its commit point left
/// it: one transaction of the control topic's fenced producer. The resumed scenario's set-up
/// (the measured CLI has no failpoints to stop an apply there).
pub fn leave_committed(
    settings: &KafkaSettings,
    control: &str,
    key: &str,
    committed: &str,
) -> R<()> {
    let kafka = Clients::new(settings)?;
    let fenced = kafka.producer(Some(&transactional_id(control)))?;
    kafka.transaction(&fenced, control, (key, committed))
}

/// A fresh apply's operations: metadata, offsets, fencing plus one transactional record
/// (COMMITTED), delete-records, one more record (APPLIED) through the same producer.
pub fn fresh(settings: &KafkaSettings, target: &Target<'_>, step: &Step<'_>) -> R<Timing> {
    let mut laps = Laps::start();
    let kafka = Clients::new(settings)?;
    fresh_with(&kafka, &mut laps, target, step)?;
    Ok(laps.finish())
}

/// A first apply's operations: the control topic's creation (one partition, compacted; not
/// waited for: the producer's first send waits for its metadata), then a fresh apply's.
pub fn fresh_creating(settings: &KafkaSettings, target: &Target<'_>, step: &Step<'_>) -> R<Timing> {
    let mut laps = Laps::start();
    let kafka = Clients::new(settings)?;
    kafka.create_control(target.control)?;
    laps.lap("create-topic");
    fresh_with(&kafka, &mut laps, target, step)?;
    Ok(laps.finish())
}

fn fresh_with(kafka: &Clients, laps: &mut Laps, target: &Target<'_>, step: &Step<'_>) -> R<()> {
    let partitions = kafka.metadata(target)?;
    laps.lap("metadata");
    let range = kafka.offset_range(target.data, &partitions)?;
    laps.lap("list-offsets");
    let fenced = kafka.producer(Some(&transactional_id(target.control)))?;
    laps.lap("init-transactions");
    kafka.transaction(&fenced, target.control, (step.key, step.committed))?;
    laps.lap("transaction");
    kafka.delete_records(target.data, &targets(step.before, &range))?;
    laps.lap("delete-records");
    // The second record through the producer already open, as the apply writes it.
    kafka.transaction(&fenced, target.control, (step.key, step.applied))?;
    laps.lap("record");
    Ok(())
}

/// An already-applied apply's operations: metadata, offsets, and the control log read to its
/// end (where the apply finds the plan APPLIED).
pub fn already_applied(settings: &KafkaSettings, target: &Target<'_>) -> R<Timing> {
    let mut laps = Laps::start();
    let kafka = Clients::new(settings)?;
    let partitions = kafka.metadata(target)?;
    laps.lap("metadata");
    kafka.offset_range(target.data, &partitions)?;
    laps.lap("list-offsets");
    let (_reader, records) = kafka.read_to_end(target.control)?;
    laps.lap("read-control-log");
    if records == 0 {
        return Err(fail("floor: the control log is empty"));
    }
    Ok(laps.finish())
}

/// A resumed apply's operations (the plan is already COMMITTED): metadata, offsets,
/// delete-records, one idempotent record (APPLIED).
pub fn resumed(settings: &KafkaSettings, target: &Target<'_>, step: &Step<'_>) -> R<Timing> {
    let mut laps = Laps::start();
    let kafka = Clients::new(settings)?;
    let partitions = kafka.metadata(target)?;
    laps.lap("metadata");
    let range = kafka.offset_range(target.data, &partitions)?;
    laps.lap("list-offsets");
    kafka.delete_records(target.data, &targets(step.before, &range))?;
    laps.lap("delete-records");
    let plain = kafka.producer(None)?;
    kafka.send(&plain, target.control, (step.key, step.applied))?;
    laps.lap("record");
    Ok(laps.finish())
}

#[cfg(test)]
mod tests {
    use super::targets;
    use action_state_format::offsets::PartitionOffsets;

    #[test]
    fn deletes_to_the_plan_within_what_each_partition_holds() {
        let before: PartitionOffsets = [(0, 50), (1, 5), (2, 500)].into_iter().collect();
        let range = [(0, 10, 100), (1, 20, 100), (2, 0, 100), (3, 0, 100)];
        assert_eq!(targets(&before, &range), [(0, 50), (1, 20), (2, 100)]);
    }
}

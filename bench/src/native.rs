//! The safety core compiled natively, driven over the host's own Kafka capabilities: the "A" side
//! of the apply and replay comparisons. Same protocol and policy code as the component (the
//! core's `Policy` over the host's capabilities, `kafka::KafkaCapabilities`), same librdkafka clients,
//! no WebAssembly boundary. Every protocol-level call is counted and timed by name.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::consumer::Consumer;
use action_state_cleanup::kafka::{KafkaCapabilities, KafkaClients};
use action_state_core::control::ControlEntry;
use action_state_core::offsets::PartitionOffsets;
use action_state_core::ops::{
    AppendError, ClusterDescription, ConfigEntry, KafkaOps, KafkaResult, OffsetSpec,
    PartitionRange, TopicDescription, TopicState,
};
use action_state_core::policy::Policy;
use action_state_core::replay::{PolledBatch, RecordSource};
use action_state_core::{CleanupError, KafkaError};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use crate::{Ctx, R};

/// `KafkaOps` (the core's policy over the host's capabilities), counting and timing calls by
/// operation name.
pub struct NativeOps<'a> {
    pub policy: Policy<KafkaCapabilities<&'a mut KafkaClients>>,
    pub calls: BTreeMap<&'static str, u32>,
    /// Seconds spent in each operation.
    pub spent: BTreeMap<&'static str, f64>,
}

impl<'a> NativeOps<'a> {
    pub fn new(kafka: &'a mut KafkaClients) -> Self {
        NativeOps {
            policy: Policy::new(KafkaCapabilities::new(kafka)),
            calls: BTreeMap::new(),
            spent: BTreeMap::new(),
        }
    }

    pub fn kafka(&mut self) -> &mut KafkaClients {
        self.policy.capabilities().kafka()
    }

    fn run<T>(
        &mut self,
        name: &'static str,
        call: impl FnOnce(&mut Policy<KafkaCapabilities<&'a mut KafkaClients>>) -> T,
    ) -> T {
        let started = Instant::now();
        let result = call(&mut self.policy);
        *self.calls.entry(name).or_default() += 1;
        *self.spent.entry(name).or_default() += started.elapsed().as_secs_f64();
        result
    }
}

impl KafkaOps for NativeOps<'_> {
    fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        self.run("inspect-topics", |p| p.inspect_topics(topics, names))
    }

    fn inspect_ranges(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        self.run("inspect-ranges", |p| p.inspect_ranges(topics, names))
    }

    fn describe_cluster(&mut self, names: &[&str]) -> KafkaResult<ClusterDescription> {
        self.run("describe-cluster", |p| p.describe_cluster(names))
    }

    fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> KafkaResult<Vec<PartitionRange>> {
        self.run("offset-range", |p| p.offset_range(topic, partitions))
    }

    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>> {
        self.run("describe-topics", |p| p.describe_topics(topics))
    }

    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>> {
        self.run("describe-configs", |p| p.describe_configs(topics, names))
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        self.run("create-topic", |p| {
            p.create_topic(topic, partitions, replication_factor, configs)
        })
    }

    fn request_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        self.run("create-topic", |p| {
            p.request_topic(topic, partitions, replication_factor, configs)
        })
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<PartitionOffsets> {
        self.run("list-offsets", |p| p.list_offsets(topic, partitions, spec))
    }

    fn delete_records(
        &mut self,
        expected: &TopicDescription,
        before: &PartitionOffsets,
    ) -> Result<PartitionOffsets, CleanupError> {
        self.run("delete-records", |p| p.delete_records(expected, before))
    }

    /// Counted as `delete-records`: the describe each attempt follows is part of the step.
    fn delete_described(
        &mut self,
        expected: &TopicDescription,
        names: &[&str],
        with_ranges: bool,
        decide: &mut dyn FnMut(Option<&TopicState>) -> Result<PartitionOffsets, CleanupError>,
    ) -> Result<PartitionOffsets, CleanupError> {
        self.run("delete-records", |p| {
            p.delete_described(expected, names, with_ranges, decide)
        })
    }

    fn read_control_log(&mut self, topic: &str) -> Result<Vec<ControlEntry>, CleanupError> {
        self.run("read-control-log", |p| p.read_control_log(topic))
    }

    fn read_control_range(
        &mut self,
        topic: &str,
        beginning: u64,
        end: u64,
    ) -> Result<Vec<ControlEntry>, CleanupError> {
        self.run("read-control-log", |p| {
            p.read_control_range(topic, beginning, end)
        })
    }

    fn pause(&mut self, ms: u32) {
        self.policy.pause(ms);
    }

    fn fence_control(&mut self, topic: &str) -> KafkaResult<()> {
        self.run("fence-control", |p| p.fence_control(topic))
    }

    fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> Result<u64, AppendError> {
        self.run("append-control", |p| {
            p.append_control(topic, key, value, fenced)
        })
    }
}

fn kafka_error(operation: &str, e: action_state_core::capabilities::HostError) -> KafkaError {
    KafkaError {
        operation: operation.to_owned(),
        message: e.to_string(),
        retriable: e.kind.is_transient(),
        cause: Some(e),
    }
}

/// The replay consumer as the core's record source (what the component's `HostSource` is),
/// counting and timing what the core asks of it.
pub struct NativeSource {
    pub consumer: Consumer,
    pub polls: u32,
    pub poll_secs: f64,
    pub positions: u32,
    pub position_secs: f64,
    pub assigns: u32,
}

impl NativeSource {
    pub fn new(consumer: Consumer) -> Self {
        NativeSource {
            consumer,
            polls: 0,
            poll_secs: 0.0,
            positions: 0,
            position_secs: 0.0,
            assigns: 0,
        }
    }
}

impl RecordSource for NativeSource {
    fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        self.assigns += 1;
        action_state_core::capabilities::Consumer::assign(&mut self.consumer, start)
            .map_err(|e| kafka_error("consumer-assign", e))
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        let started = Instant::now();
        let positions = action_state_core::capabilities::Consumer::position(&mut self.consumer)
            .map_err(|e| kafka_error("consumer-position", e));
        self.positions += 1;
        self.position_secs += started.elapsed().as_secs_f64();
        positions
    }

    fn poll(&mut self, max_records: u32, timeout_ms: u32) -> KafkaResult<PolledBatch> {
        let started = Instant::now();
        let records = self
            .consumer
            .poll_records(max_records, timeout_ms)
            .map_err(|e| kafka_error("consumer-poll", e));
        self.polls += 1;
        self.poll_secs += started.elapsed().as_secs_f64();
        records
    }
}

/// Polls without data, as the component's replay does.
trait PollRecords {
    fn poll_records(
        &mut self,
        max: u32,
        timeout_ms: u32,
    ) -> action_state_core::capabilities::CapResult<PolledBatch>;
}

impl PollRecords for Consumer {
    fn poll_records(
        &mut self,
        max: u32,
        timeout_ms: u32,
    ) -> action_state_core::capabilities::CapResult<PolledBatch> {
        action_state_core::capabilities::Consumer::poll(self, max, timeout_ms, false)
    }
}

/// A plain librdkafka producer for loading test data: batched, many records in flight.
/// (`KafkaClients::produce_batch` awaits each delivery before sending the next record: it builds
/// the send futures first, but rdkafka only enqueues a record when its future is polled.)
pub struct BulkProducer(BaseProducer);

impl BulkProducer {
    pub fn new(ctx: &Ctx) -> R<Self> {
        let producer: BaseProducer = ClientConfig::new()
            .set(
                "bootstrap.servers",
                ctx.bootstrap.as_deref().unwrap_or_default(),
            )
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "20")
            .set("batch.size", "1000000")
            .set("queue.buffering.max.kbytes", "262144")
            .create()?;
        Ok(BulkProducer(producer))
    }

    pub fn send(&self, topic: &str, partition: i32, key: &str, value: Option<&str>) -> R<()> {
        let mut record: BaseRecord<'_, str, str> =
            BaseRecord::to(topic).partition(partition).key(key);
        if let Some(value) = value {
            record = record.payload(value);
        }
        loop {
            match self.0.send(record) {
                Ok(()) => {
                    self.0.poll(Duration::ZERO);
                    return Ok(());
                }
                Err((RdError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    record = back;
                    self.0.poll(Duration::from_millis(20));
                }
                Err((error, _)) => return Err(error.into()),
            }
        }
    }

    pub fn flush(&self) -> R<()> {
        Ok(self.0.flush(Duration::from_secs(120))?)
    }
}

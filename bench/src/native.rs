//! The safety core compiled natively, driven over the host's own Kafka capabilities: the "A" side
//! of the apply and replay comparisons. Same protocol code as the component, same librdkafka
//! clients, no WebAssembly boundary. Every capability call is counted and timed by name.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::consumer::ReplayConsumer;
use action_state_cleanup::kafka::fence::AppendFailure;
use action_state_cleanup::kafka::{CapabilityError, KafkaClients, ffi};
use action_state_core::KafkaError;
use action_state_core::control::ControlEntry;
use action_state_core::offsets::PartitionOffsets;
use action_state_core::ops::{
    AppendError, ConfigEntry, KafkaOps, KafkaResult, OffsetSpec, PartitionRange, TopicDescription,
    TopicState,
};
use action_state_core::replay::{ConsumedRecord, RecordSource};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use crate::{Ctx, R};

fn kafka_error(e: CapabilityError) -> KafkaError {
    KafkaError {
        operation: e.operation.to_owned(),
        message: e.message,
        retriable: e.retriable,
    }
}

/// `KafkaOps` over `KafkaClients`, as the component's imports are, counting and timing calls by
/// capability name.
pub struct NativeOps<'a> {
    pub kafka: &'a mut KafkaClients,
    pub calls: BTreeMap<&'static str, u32>,
    /// Seconds spent in each capability.
    pub spent: BTreeMap<&'static str, f64>,
}

impl<'a> NativeOps<'a> {
    pub fn new(kafka: &'a mut KafkaClients) -> Self {
        NativeOps {
            kafka,
            calls: BTreeMap::new(),
            spent: BTreeMap::new(),
        }
    }

    fn run<T>(&mut self, name: &'static str, call: impl FnOnce(&mut KafkaClients) -> T) -> T {
        let started = Instant::now();
        let result = call(self.kafka);
        *self.calls.entry(name).or_default() += 1;
        *self.spent.entry(name).or_default() += started.elapsed().as_secs_f64();
        result
    }
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|t| (*t).to_owned()).collect()
}

impl KafkaOps for NativeOps<'_> {
    fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        let (topics, names) = (owned(topics), owned(names));
        let states = self
            .run("inspect-topics", |k| k.inspect_topics(&topics, &names))
            .map_err(kafka_error)?;
        Ok(topics
            .into_iter()
            .zip(states)
            .map(|(topic, state)| {
                state.map(|(d, configs)| TopicState {
                    description: TopicDescription {
                        topic,
                        topic_id: d.topic_id,
                        partitions: d.partitions,
                    },
                    configs: configs
                        .into_iter()
                        .map(|(name, value)| ConfigEntry { name, value })
                        .collect(),
                })
            })
            .collect())
    }

    fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> KafkaResult<Vec<PartitionRange>> {
        self.run("offset-range", |k| k.offset_range(topic, partitions))
            .map_err(kafka_error)
    }

    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>> {
        let topics = owned(topics);
        let described = self
            .run("describe-topics", |k| k.describe_topics(&topics))
            .map_err(kafka_error)?;
        Ok(topics
            .into_iter()
            .zip(described)
            .map(|(topic, d)| {
                d.map(|d| TopicDescription {
                    topic,
                    topic_id: d.topic_id,
                    partitions: d.partitions,
                })
            })
            .collect())
    }

    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>> {
        let (topics, names) = (owned(topics), owned(names));
        let configs = self
            .run("describe-configs", |k| k.describe_configs(&topics, &names))
            .map_err(kafka_error)?;
        Ok(configs
            .into_iter()
            .map(|entries| {
                entries
                    .into_iter()
                    .map(|(name, value)| ConfigEntry { name, value })
                    .collect()
            })
            .collect())
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let configs: Vec<(String, String)> = configs
            .iter()
            .filter_map(|c| c.value.clone().map(|v| (c.name.clone(), v)))
            .collect();
        self.run("create-topic", |k| {
            k.create_topic(topic, partitions, replication_factor, &configs)
        })
        .map_err(kafka_error)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<PartitionOffsets> {
        let spec = match spec {
            OffsetSpec::Earliest => ffi::Spec::Earliest,
            OffsetSpec::Latest => ffi::Spec::Latest,
        };
        let offsets = self
            .run("list-offsets", |k| k.list_offsets(topic, partitions, spec))
            .map_err(kafka_error)?;
        Ok(offsets.into_iter().collect())
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<PartitionOffsets> {
        let before: Vec<(u32, u64)> = before.iter().collect();
        let after = self
            .run("delete-records", |k| k.delete_records(topic, &before))
            .map_err(kafka_error)?;
        Ok(after.into_iter().collect())
    }

    fn read_control_log(&mut self, topic: &str) -> KafkaResult<Vec<ControlEntry>> {
        let records = self
            .run("read-control-log", |k| k.read_control_log(topic))
            .map_err(kafka_error)?;
        Ok(records
            .into_iter()
            .map(|(offset, key, value)| ControlEntry { offset, key, value })
            .collect())
    }

    fn fence_control(&mut self, topic: &str) -> KafkaResult<()> {
        self.run("fence-control", |k| k.fence_control(topic))
            .map_err(kafka_error)
    }

    fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> Result<u64, AppendError> {
        self.run("append-control", |k| {
            k.append_control(topic, key, value, fenced)
        })
        .map_err(|failure| match failure {
            AppendFailure::Fenced(why) => AppendError::Fenced(why),
            AppendFailure::Failed(error) => AppendError::Failed(kafka_error(error)),
        })
    }
}

/// The replay consumer as the core's record source (what the component's `HostSource` is),
/// counting and timing what the core asks of it.
pub struct NativeSource {
    pub consumer: ReplayConsumer,
    pub polls: u32,
    pub poll_secs: f64,
    pub positions: u32,
    pub position_secs: f64,
    pub assigns: u32,
}

impl NativeSource {
    pub fn new(consumer: ReplayConsumer) -> Self {
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
        let start: Vec<(u32, u64)> = start.iter().collect();
        self.consumer.assign(&start).map_err(kafka_error)
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        let started = Instant::now();
        let positions = self.consumer.position().map_err(kafka_error);
        self.positions += 1;
        self.position_secs += started.elapsed().as_secs_f64();
        Ok(positions?.into_iter().collect())
    }

    fn poll(&mut self, max_records: u32, timeout_ms: u32) -> KafkaResult<Vec<ConsumedRecord>> {
        let started = Instant::now();
        let records = self
            .consumer
            .poll(max_records, Duration::from_millis(u64::from(timeout_ms)))
            .map_err(kafka_error);
        self.polls += 1;
        self.poll_secs += started.elapsed().as_secs_f64();
        Ok(records?
            .into_iter()
            .map(|r| ConsumedRecord {
                partition: r.partition,
                offset: r.offset,
                key: r.key,
                value: r.value,
                decode_error: r.decode_error,
            })
            .collect())
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

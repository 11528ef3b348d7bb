//! The safety core compiled natively, driven over the host's own Kafka capabilities: the "A" side
//! of the apply and replay comparisons. Same protocol and policy code as the component (the
//! core's `Policy` over the host's capabilities, `kafka::KafkaCapabilities`), same librdkafka clients,
//! no WebAssembly boundary. Every capability call is counted and timed by name (`Timed`, a
//! decorator of the capabilities).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::KafkaCapabilities;
use action_state_cleanup::kafka::KafkaClients;
use action_state_cleanup::kafka::consumer::Consumer;
use action_state_format::offsets::PartitionOffsets;
use action_state_kafka::capabilities::{
    self as caps, Capabilities, KafkaResult, PolledBatch, TopicMetadata,
};
use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_kafka::policy::Policy;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use crate::{Ctx, R};

/// Calls and seconds per capability (its WIT name), as the core made them.
#[derive(Debug, Default)]
pub struct CallLog {
    pub calls: BTreeMap<&'static str, u32>,
    /// Seconds spent in each capability.
    pub spent: BTreeMap<&'static str, f64>,
}

type SharedLog = Rc<RefCell<CallLog>>;

/// Times `call` as one call of the capability `name`.
fn timed<T>(log: &SharedLog, name: &'static str, call: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = call();
    let mut log = log.borrow_mut();
    *log.calls.entry(name).or_default() += 1;
    *log.spent.entry(name).or_default() += started.elapsed().as_secs_f64();
    result
}

/// Capabilities that count and time every call of the ones they wrap, their writers' and
/// consumers' included: the core's policy runs over them unchanged.
pub struct Timed<C> {
    inner: C,
    log: SharedLog,
}

pub struct TimedWriter<W> {
    inner: W,
    log: SharedLog,
}

pub struct TimedConsumer<K> {
    /// The wrapped consumer (the host's consumer holds the records of its latest poll).
    pub inner: K,
    log: SharedLog,
}

impl<W: caps::Writer> caps::Writer for TimedWriter<W> {
    fn append(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> KafkaResult<u64> {
        let inner = &mut self.inner;
        timed(&self.log, "append", || {
            inner.append(topic, partition, key, value)
        })
    }
}

impl<K: caps::Consumer> caps::Consumer for TimedConsumer<K> {
    fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        let inner = &mut self.inner;
        timed(&self.log, "assign", || inner.assign(start))
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        let inner = &mut self.inner;
        timed(&self.log, "position", || inner.position())
    }

    fn poll(
        &mut self,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        let inner = &mut self.inner;
        timed(&self.log, "poll", || {
            inner.poll(max_records, timeout_ms, with_data)
        })
    }
}

impl<C: Capabilities> Capabilities for Timed<C> {
    type Writer = TimedWriter<C::Writer>;
    type Consumer = TimedConsumer<C::Consumer>;

    fn now_ms(&mut self) -> u64 {
        self.inner.now_ms()
    }

    fn sleep_ms(&mut self, ms: u32) {
        self.inner.sleep_ms(ms);
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        self.inner.operation_timeout_ms()
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        self.inner.retrying(message, remaining_ms);
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let inner = &mut self.inner;
        timed(&self.log, "describe", || {
            inner.describe(topics, config_names, with_offsets)
        })
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        let inner = &mut self.inner;
        timed(&self.log, "describe-cluster", || {
            inner.describe_cluster(config_names)
        })
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let inner = &mut self.inner;
        timed(&self.log, "create-topic", || {
            inner.create_topic(topic, partitions, replication_factor, configs)
        })
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let inner = &mut self.inner;
        timed(&self.log, "list-offsets", || {
            inner.list_offsets(topic, partitions, spec)
        })
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let inner = &mut self.inner;
        timed(&self.log, "delete-records", || {
            inner.delete_records(topic, before)
        })
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Self::Writer> {
        let inner = &mut self.inner;
        let writer = timed(&self.log, "open-writer", || {
            inner.open_writer(transactional_id)
        })?;
        Ok(TimedWriter {
            inner: writer,
            log: self.log.clone(),
        })
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Self::Consumer> {
        let inner = &mut self.inner;
        let consumer = timed(&self.log, "open-consumer", || inner.open_consumer(topic))?;
        Ok(TimedConsumer {
            inner: consumer,
            log: self.log.clone(),
        })
    }
}

/// The core natively: its policy over the host's capabilities (what the component's imports
/// do), every capability call counted and timed by name.
pub struct NativeCore<'a> {
    pub policy: Policy<Timed<KafkaCapabilities<&'a mut KafkaClients>>>,
    log: SharedLog,
}

impl<'a> NativeCore<'a> {
    pub fn new(kafka: &'a mut KafkaClients) -> Self {
        let log = SharedLog::default();
        let caps = Timed {
            inner: KafkaCapabilities::new(kafka),
            log: log.clone(),
        };
        NativeCore {
            policy: Policy::new(caps),
            log,
        }
    }

    /// Calls per capability so far.
    pub fn calls(&self) -> BTreeMap<&'static str, u32> {
        self.log.borrow().calls.clone()
    }

    /// Seconds per capability so far.
    pub fn spent(&self) -> BTreeMap<&'static str, f64> {
        self.log.borrow().spent.clone()
    }

    /// The replay consumer a recovery session opened (it holds the records of the latest poll).
    pub fn replay_consumer(&mut self) -> Option<&mut Consumer> {
        self.policy.replay_consumer().map(|c| &mut c.inner)
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

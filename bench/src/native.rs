//! The safety core compiled natively, driven over the host's own Kafka capabilities: the "A" side
//! of the apply and replay comparisons. Same protocol and policy code as the component (the
//! core's `Policy` over the host's capabilities, `kafka::KafkaCapabilities`), same librdkafka clients,
//! no WebAssembly boundary. Every capability call is counted and timed by name (`Timed`, a
//! layer of the capabilities).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::KafkaCapabilities;
use action_state_cleanup::kafka::KafkaClients;
use action_state_cleanup::kafka::consumer::Consumer;
use action_state_kafka::capabilities::{AnswerOf, Call, CallOn, Capabilities};
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

/// Capabilities that count and time every Kafka call of the ones they wrap (a layer): the
/// core's policy runs over them unchanged.
pub struct Timed<C> {
    inner: C,
    log: SharedLog,
}

/// The name a call is logged under: its operation, as the floor's steps are named.
fn logged_name<W, K>(call: &Call<'_, W, K>) -> &'static str {
    match call.name() {
        "writer.open" => "open-writer",
        "consumer.open" => "open-consumer",
        "writer.append" => "append",
        "consumer.assign" => "assign",
        "consumer.position" => "position",
        "consumer.poll" => "poll",
        name => name,
    }
}

impl<C: Capabilities> Capabilities for Timed<C> {
    type Writer = C::Writer;
    type Consumer = C::Consumer;

    fn call(&mut self, call: CallOn<'_, C>) -> AnswerOf<C> {
        if !call.is_kafka() {
            return self.inner.call(call);
        }
        let name = logged_name(&call);
        let started = Instant::now();
        let answer = self.inner.call(call);
        let mut log = self.log.borrow_mut();
        *log.calls.entry(name).or_default() += 1;
        *log.spent.entry(name).or_default() += started.elapsed().as_secs_f64();
        answer
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
        self.policy.replay_consumer()
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

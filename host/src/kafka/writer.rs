//! `kafka-writer`: a producer per writer handle, transactional (fenced at open) or idempotent.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::error::KafkaError as RdError;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::util::Timeout;

use super::client_log::ClientLog;
use crate::trace;

use super::errors::{ErrorKind, KafkaError, KafkaResult, from_code, from_rd, invalid};
use super::progress;

/// One producer; transactional when opened with a transactional id.
pub struct Writer {
    producer: FutureProducer<ClientLog>,
    transactional: bool,
    timeout: Duration,
    runtime: tokio::runtime::Runtime,
}

impl Writer {
    pub fn open(
        config: ClientConfig,
        transactional_id: Option<&str>,
        timeout: Duration,
    ) -> KafkaResult<Self> {
        Writer::create(config, transactional_id, timeout)?.initialise()
    }

    /// The client alone: it connects to the cluster in the background but sends nothing on its
    /// own that changes any state (a transactional producer fences nobody until `initialise`).
    /// A host can make one ahead of time, while the component checks, and initialise it when
    /// the component opens its writer.
    pub fn create(
        mut config: ClientConfig,
        transactional_id: Option<&str>,
        timeout: Duration,
    ) -> KafkaResult<Unopened> {
        let millis = timeout.as_millis().max(1).to_string();
        config
            .set("enable.idempotence", "true")
            // A producer's metadata request may create a missing topic on a broker that allows
            // it; a control topic is only ever created by the component, with its settings.
            .set("allow.auto.create.topics", "false")
            .set("acks", "all")
            .set("linger.ms", "0")
            .set("request.timeout.ms", &millis)
            .set("message.timeout.ms", &millis);
        if let Some(id) = transactional_id {
            config
                .set("transactional.id", id)
                // With sparse connections the coordinator lookup waits a 500 ms timer.
                .set("enable.sparse.connections", "false")
                // Brokers refuse transaction timeouts above transaction.max.timeout.ms (15 min
                // by default); one append's transaction never needs longer than that.
                .set(
                    "transaction.timeout.ms",
                    timeout.as_millis().clamp(10_000, 900_000).to_string(),
                );
        }
        let producer: FutureProducer<ClientLog> = trace::timed(
            "writer: create producer",
            || {
                config
                    .create_with_context(ClientLog)
                    .map_err(|e| from_rd(&e))
            },
            trace::outcome,
        )?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| invalid(format!("cannot start the producer's runtime: {e}")))?;
        Ok(Unopened {
            writer: Writer {
                producer,
                transactional: transactional_id.is_some(),
                timeout,
                runtime,
            },
            transactional_id: transactional_id.map(str::to_owned),
        })
    }

    /// Appends one record; a transactional writer wraps it in its own transaction. Reported
    /// while it waits (`progress`): a leader that died keeps it waiting until its timeout.
    pub fn append(&self, topic: &str, partition: u32, key: &str, value: &str) -> KafkaResult<u64> {
        progress::watched(
            &format!("append to {topic} partition {partition}"),
            || None,
            || self.append_once(topic, partition, key, value),
        )
    }

    fn append_once(&self, topic: &str, partition: u32, key: &str, value: &str) -> KafkaResult<u64> {
        let partition = i32::try_from(partition)
            .map_err(|_| invalid(format!("partition {partition} is out of Kafka's range")))?;
        if self.transactional {
            trace::timed(
                "writer: begin_transaction",
                || self.producer.begin_transaction(),
                trace::outcome,
            )
            .map_err(|e| fenced_or(&self.producer, &e))?;
        }
        let record = FutureRecord::to(topic)
            .partition(partition)
            .key(key)
            .payload(value);
        let started = std::time::Instant::now();
        let delivery = self.producer.send(record, Timeout::After(self.timeout));
        let delivered = self.runtime.block_on(delivery);
        trace::step("writer: produce until acknowledged", started, || {
            let registered = if self.transactional {
                " (AddPartitionsToTxn first)"
            } else {
                ""
            };
            format!("{topic}-{partition}{registered}")
        });
        let offset = match delivered {
            Ok(delivered) => u64::try_from(delivered.offset).unwrap_or(0),
            Err((error, _)) => return Err(self.abort(&error)),
        };
        if self.transactional
            && let Err(error) = trace::timed(
                "writer: commit_transaction (EndTxn)",
                || {
                    self.producer
                        .commit_transaction(Timeout::After(self.timeout))
                },
                trace::outcome,
            )
        {
            return Err(self.abort(&error));
        }
        Ok(offset)
    }

    /// Aborts the open transaction (when there is one and the client allows it) and says why
    /// the append failed.
    fn abort(&self, error: &RdError) -> KafkaError {
        let failure = fenced_or(&self.producer, error);
        if self.transactional && failure.kind != ErrorKind::Fenced {
            let _ = self
                .producer
                .abort_transaction(Timeout::After(self.timeout));
        }
        failure
    }
}

/// A producer client made by `Writer::create`, not opened yet.
pub struct Unopened {
    writer: Writer,
    transactional_id: Option<String>,
}

impl Unopened {
    /// The transactional id this producer is for (`None`: idempotent).
    pub fn transactional_id(&self) -> Option<&str> {
        self.transactional_id.as_deref()
    }

    /// Opens the writer: a transactional producer initialises its transactions (finds its
    /// coordinator and fences every earlier producer of its id); an idempotent one gets its
    /// producer id before the first append needs it.
    pub fn initialise(self) -> KafkaResult<Writer> {
        let Unopened {
            writer,
            transactional_id,
        } = self;
        let producer = &writer.producer;
        let timeout = writer.timeout;
        if let Some(id) = transactional_id {
            trace::timed(
                "writer: init_transactions (FindCoordinator, InitProducerId)",
                || producer.init_transactions(Timeout::After(timeout)),
                |answer| format!("{id}: {}", trace::outcome(answer)),
            )
            .map_err(|e| fenced_or(producer, &e))?;
        } else {
            trace::timed(
                "writer: metadata (idempotent producer id)",
                || {
                    producer
                        .client()
                        .fetch_metadata(None, Timeout::After(timeout))
                },
                trace::outcome,
            )
            .map_err(|e| from_rd(&e))?;
        }
        Ok(writer)
    }
}

/// A fenced transactional producer raises a fatal error and purges what it had queued, so a
/// send may only report the purge: the fatal error says why.
fn fenced_or(producer: &FutureProducer<ClientLog>, error: &RdError) -> KafkaError {
    if let Some((code, reason)) = producer.client().fatal_error() {
        return from_code(code, reason);
    }
    from_rd(error)
}

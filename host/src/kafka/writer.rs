//! `kafka-writer`: a producer per writer handle, transactional (fenced at open) or idempotent.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::error::KafkaError as RdError;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::util::Timeout;

use super::client_log::ClientLog;
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
        mut config: ClientConfig,
        transactional_id: Option<&str>,
        timeout: Duration,
    ) -> KafkaResult<Self> {
        let millis = timeout.as_millis().max(1).to_string();
        config
            .set("enable.idempotence", "true")
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
        let producer: FutureProducer<ClientLog> = config
            .create_with_context(ClientLog)
            .map_err(|e| from_rd(&e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| invalid(format!("cannot start the producer's runtime: {e}")))?;
        if transactional_id.is_some() {
            producer
                .init_transactions(Timeout::After(timeout))
                .map_err(|e| fenced_or(&producer, &e))?;
        } else {
            // The idempotent producer gets its producer id before the first append needs it.
            producer
                .client()
                .fetch_metadata(None, Timeout::After(timeout))
                .map_err(|e| from_rd(&e))?;
        }
        Ok(Writer {
            producer,
            transactional: transactional_id.is_some(),
            timeout,
            runtime,
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
            self.producer
                .begin_transaction()
                .map_err(|e| fenced_or(&self.producer, &e))?;
        }
        let record = FutureRecord::to(topic)
            .partition(partition)
            .key(key)
            .payload(value);
        let delivery = self.producer.send(record, Timeout::After(self.timeout));
        let offset = match self.runtime.block_on(delivery) {
            Ok(delivered) => u64::try_from(delivered.offset).unwrap_or(0),
            Err((error, _)) => return Err(self.abort(&error)),
        };
        if self.transactional
            && let Err(error) = self
                .producer
                .commit_transaction(Timeout::After(self.timeout))
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

/// A fenced transactional producer raises a fatal error and purges what it had queued, so a
/// send may only report the purge: the fatal error says why.
fn fenced_or(producer: &FutureProducer<ClientLog>, error: &RdError) -> KafkaError {
    if let Some((code, reason)) = producer.client().fatal_error() {
        return from_code(code, reason);
    }
    from_rd(error)
}

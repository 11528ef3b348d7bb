//! The fenced control-topic writer: a transactional producer whose transactional id derives from
//! the control topic, so that of two applies on one control topic only the one that initialised
//! last can commit.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::util::Timeout;

use super::CapabilityError;

/// Why a fenced append did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendFailure {
    Fenced(String),
    Failed(CapabilityError),
}

/// The transactional id of a control topic's writer (one per control topic, every host alike).
pub fn transactional_id(control_topic: &str) -> String {
    format!("action-state-cleanup:{control_topic}")
}

fn is_fencing(code: Option<RDKafkaErrorCode>) -> bool {
    matches!(
        code,
        Some(
            RDKafkaErrorCode::ProducerFenced
                | RDKafkaErrorCode::InvalidProducerEpoch
                | RDKafkaErrorCode::Fenced
                | RDKafkaErrorCode::InvalidTransactionalState
        )
    )
}

fn failure(producer: &FutureProducer, operation: &'static str, error: &RdError) -> AppendFailure {
    // A fenced transactional producer raises a fatal error and purges what it had queued, so the
    // send itself may only report the purge: the fatal error says why.
    if let Some((code, reason)) = producer.client().fatal_error()
        && is_fencing(Some(code))
    {
        return AppendFailure::Fenced(reason);
    }
    if is_fencing(error.rdkafka_error_code()) {
        return AppendFailure::Fenced(error.to_string());
    }
    AppendFailure::Failed(CapabilityError {
        operation,
        message: error.to_string(),
        retriable: false,
    })
}

/// The only writer of one control topic, once `init_transactions` returned.
pub struct FencedWriter {
    pub topic: String,
    producer: FutureProducer,
    timeout: Duration,
}

impl FencedWriter {
    /// Initialises the transactional producer: earlier writers are fenced and their open
    /// transaction is completed or aborted before this returns.
    pub fn fence(
        mut config: ClientConfig,
        topic: &str,
        timeout: Duration,
    ) -> Result<Self, CapabilityError> {
        config
            .set("transactional.id", transactional_id(topic))
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "0")
            // Brokers refuse transaction timeouts above transaction.max.timeout.ms (15 min by
            // default); one append's transaction never needs longer than that.
            .set(
                "transaction.timeout.ms",
                timeout.as_millis().clamp(10_000, 900_000).to_string(),
            );
        let error = |e: RdError| CapabilityError {
            operation: "fence-control",
            message: e.to_string(),
            retriable: false,
        };
        let producer: FutureProducer = config.create().map_err(error)?;
        producer
            .init_transactions(Timeout::After(timeout))
            .map_err(error)?;
        Ok(FencedWriter {
            topic: topic.to_owned(),
            producer,
            timeout,
        })
    }

    /// Writes one record in its own transaction; returns its offset once committed.
    pub fn append(
        &self,
        runtime: &tokio::runtime::Runtime,
        key: &str,
        value: &str,
    ) -> Result<u64, AppendFailure> {
        self.producer
            .begin_transaction()
            .map_err(|e| failure(&self.producer, "append-control", &e))?;
        let record = FutureRecord::to(&self.topic)
            .partition(0)
            .key(key)
            .payload(value);
        let delivery = self.producer.send(record, Timeout::After(self.timeout));
        let offset = match runtime.block_on(delivery) {
            Ok(delivered) => u64::try_from(delivered.offset).unwrap_or(0),
            Err((error, _)) => {
                let _ = self
                    .producer
                    .abort_transaction(Timeout::After(self.timeout));
                return Err(failure(&self.producer, "append-control", &error));
            }
        };
        if let Err(error) = self
            .producer
            .commit_transaction(Timeout::After(self.timeout))
        {
            let _ = self
                .producer
                .abort_transaction(Timeout::After(self.timeout));
            return Err(failure(&self.producer, "append-control", &error));
        }
        Ok(offset)
    }
}

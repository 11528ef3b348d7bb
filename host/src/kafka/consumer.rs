//! The replay consumer behind the `kafka-consumer` resource: explicit assignment and seek, no
//! group membership, no offset commits, bulk polls.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use super::CapabilityError;

/// One consumed record; key and value as text (see the WIT on why strings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumed {
    pub partition: u32,
    pub offset: u64,
    pub key: Option<String>,
    pub value: Option<String>,
    /// Why the key or value is not valid UTF-8 (they then hold a lossy rendering).
    pub decode_error: Option<String>,
}

/// Strict UTF-8: a lossy rendering plus the reason when the bytes are not text.
fn decode(what: &str, bytes: Option<&[u8]>, error: &mut Option<String>) -> Option<String> {
    let bytes = bytes?;
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text.to_owned()),
        Err(e) => {
            error.get_or_insert_with(|| {
                format!(
                    "the {what} is not valid UTF-8 (invalid byte at position {})",
                    e.valid_up_to()
                )
            });
            Some(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}

/// A consumer of one topic, owned by the guest through a resource handle.
pub struct ReplayConsumer {
    topic: String,
    consumer: Result<BaseConsumer, CapabilityError>,
    /// An error that arrived after records were already taken in the same poll.
    deferred: Option<CapabilityError>,
}

fn error(operation: &'static str, message: impl std::fmt::Display) -> CapabilityError {
    CapabilityError {
        operation,
        message: message.to_string(),
        retriable: false,
    }
}

impl ReplayConsumer {
    pub fn new(mut config: ClientConfig, topic: &str) -> Result<Self, CapabilityError> {
        // An assign-only consumer still needs a group id; it never joins or commits.
        config
            .set("group.id", "action-state-cleanup-replay")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "error")
            .set("isolation.level", "read_committed")
            // A replay drains as fast as it can; when it falls briefly behind the fetcher, the
            // default 1 s queue back-off would turn that into whole seconds of idle.
            .set("fetch.queue.backoff.ms", "10");
        let consumer = config.create().map_err(|e| error("consumer-create", e))?;
        Ok(ReplayConsumer {
            topic: topic.to_owned(),
            consumer: Ok(consumer),
            deferred: None,
        })
    }

    /// A consumer whose creation failed: every call reports that failure.
    pub fn broken(topic: &str, failure: CapabilityError) -> Self {
        ReplayConsumer {
            topic: topic.to_owned(),
            consumer: Err(failure),
            deferred: None,
        }
    }

    fn consumer(&self) -> Result<&BaseConsumer, CapabilityError> {
        self.consumer.as_ref().map_err(Clone::clone)
    }

    pub fn assign(&mut self, start: &[(u32, u64)]) -> Result<(), CapabilityError> {
        // A new assignment starts a new read: an error deferred from the old one is moot.
        self.deferred = None;
        let mut list = TopicPartitionList::with_capacity(start.len());
        for &(partition, offset) in start {
            let (Ok(p), Ok(o)) = (i32::try_from(partition), i64::try_from(offset)) else {
                return Err(error(
                    "consumer-assign",
                    format!("partition {partition} offset {offset} out of range"),
                ));
            };
            list.add_partition_offset(&self.topic, p, Offset::Offset(o))
                .map_err(|e| error("consumer-assign", e))?;
        }
        self.consumer()?
            .assign(&list)
            .map_err(|e| error("consumer-assign", e))
    }

    /// Fetch positions of the assigned partitions whose position is known.
    pub fn position(&self) -> Result<Vec<(u32, u64)>, CapabilityError> {
        let list = self
            .consumer()?
            .position()
            .map_err(|e| error("consumer-position", e))?;
        Ok(list
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => {
                    Some((u32::try_from(e.partition()).ok()?, u64::try_from(o).ok()?))
                }
                _ => None,
            })
            .collect())
    }

    /// Waits up to `timeout` for the first record, then takes what is already buffered.
    pub fn poll(
        &mut self,
        max_records: u32,
        timeout: Duration,
    ) -> Result<Vec<Consumed>, CapabilityError> {
        if let Some(error) = self.deferred.take() {
            return Err(error);
        }
        let mut batch = Vec::new();
        let deadline = Instant::now() + timeout;
        let mut wait = timeout;
        while batch.len() < max_records as usize {
            match self.consumer()?.poll(wait) {
                Some(Ok(message)) => {
                    let mut decode_error = None;
                    let key = decode("key", message.key(), &mut decode_error);
                    let value = decode("value", message.payload(), &mut decode_error);
                    batch.push(Consumed {
                        partition: u32::try_from(message.partition()).unwrap_or(0),
                        offset: u64::try_from(message.offset()).unwrap_or(0),
                        key,
                        value,
                        decode_error,
                    });
                    wait = Duration::ZERO;
                }
                Some(Err(e)) => {
                    let error = CapabilityError {
                        operation: "consumer-poll",
                        message: e.to_string(),
                        retriable: true,
                    };
                    if batch.is_empty() {
                        return Err(error);
                    }
                    // Records already taken are handed out; the error comes with the next poll.
                    self.deferred = Some(error);
                    break;
                }
                None if batch.is_empty() && Instant::now() < deadline => {
                    wait = deadline.saturating_duration_since(Instant::now());
                }
                None => break,
            }
        }
        Ok(batch)
    }
}

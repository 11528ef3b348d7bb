//! `kafka-consumer`: an assign-only consumer that keeps the records of its latest poll, so the
//! runtime receives them without their keys and values ever crossing into the guest.

use std::time::{Duration, Instant};

use action_state_core::capabilities::record_flags;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use super::errors::{HostError, KafkaResult, from_rd, invalid};

/// A record of the latest poll, as the client delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRecord {
    pub partition: u32,
    pub offset: u64,
    pub key: Option<Payload>,
    pub value: Option<Payload>,
}

impl HeldRecord {
    /// Whether every present key and value is text.
    pub fn utf8(&self) -> bool {
        [&self.key, &self.value]
            .iter()
            .all(|p| p.as_ref().is_none_or(Payload::is_text))
    }

    /// The record's `polled-batch.flags` entry.
    pub fn flags(&self) -> u8 {
        record_flags::of(self.key.is_some(), self.value.is_some(), self.utf8())
    }
}

/// A key or value, decoded as UTF-8 once, when it is taken from the client: the guest learns
/// whether it is text, and the runtime receives the text without a second check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    Text(String),
    Binary(Vec<u8>),
}

impl Payload {
    pub fn decode(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Payload::Text(text.to_owned()),
            Err(_) => Payload::Binary(bytes.to_vec()),
        }
    }

    pub fn is_text(&self) -> bool {
        matches!(self, Payload::Text(_))
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            Payload::Text(text) => Some(text),
            Payload::Binary(_) => None,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Payload::Text(text) => text.as_bytes(),
            Payload::Binary(bytes) => bytes,
        }
    }

    pub fn into_text(self) -> Option<String> {
        match self {
            Payload::Text(text) => Some(text),
            Payload::Binary(_) => None,
        }
    }
}

/// The records of a poll as the WIT's `polled-batch` columns: entry `i` of each column is
/// record `i`, flags as `record_flags` defines them, texts only when asked for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Columns {
    pub partitions: Vec<u32>,
    pub offsets: Vec<u64>,
    pub flags: Vec<u8>,
    pub keys: Vec<Option<String>>,
    pub values: Vec<Option<String>>,
}

impl Columns {
    pub fn of(held: &[HeldRecord], with_data: bool) -> Self {
        let mut columns = Columns {
            partitions: held.iter().map(|r| r.partition).collect(),
            offsets: held.iter().map(|r| r.offset).collect(),
            flags: held.iter().map(HeldRecord::flags).collect(),
            ..Columns::default()
        };
        if with_data {
            let text = |p: &Option<Payload>| p.as_ref().and_then(Payload::text).map(str::to_owned);
            // A text is handed out only when the whole record is text (bit UTF8).
            let whole = |r: &HeldRecord, p: &Option<Payload>| r.utf8().then(|| text(p)).flatten();
            columns.keys = held.iter().map(|r| whole(r, &r.key)).collect();
            columns.values = held.iter().map(|r| whole(r, &r.value)).collect();
        }
        columns
    }
}

pub struct Consumer {
    topic: String,
    consumer: BaseConsumer,
    /// An error that arrived after records were already taken in the same poll.
    deferred: Option<HostError>,
    /// The records of the latest poll.
    pub held: Vec<HeldRecord>,
}

impl Consumer {
    pub fn open(mut config: ClientConfig, topic: &str) -> KafkaResult<Self> {
        // An assign-only consumer still needs a group id; it never joins or commits.
        config
            .set("group.id", "action-state-cleanup-replay")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "error")
            .set("isolation.level", "read_committed")
            // A replay drains as fast as it can; the default 1 s queue back-off would turn a
            // short lag behind the fetcher into whole seconds of idle.
            .set("fetch.queue.backoff.ms", "10");
        let consumer = config.create().map_err(|e| from_rd(&e))?;
        Ok(Consumer {
            topic: topic.to_owned(),
            consumer,
            deferred: None,
            held: Vec::new(),
        })
    }

    pub fn assign(&mut self, start: &[(u32, u64)]) -> KafkaResult<()> {
        // A new assignment starts a new read: an error deferred from the old one is moot.
        self.deferred = None;
        let mut list = TopicPartitionList::with_capacity(start.len());
        for &(partition, offset) in start {
            let (Ok(p), Ok(o)) = (i32::try_from(partition), i64::try_from(offset)) else {
                return Err(invalid(format!(
                    "partition {partition} offset {offset} is out of Kafka's range"
                )));
            };
            list.add_partition_offset(&self.topic, p, Offset::Offset(o))
                .map_err(|e| from_rd(&e))?;
        }
        self.consumer.assign(&list).map_err(|e| from_rd(&e))
    }

    pub fn position(&self) -> KafkaResult<Vec<(u32, u64)>> {
        let list = self.consumer.position().map_err(|e| from_rd(&e))?;
        let mut positions: Vec<(u32, u64)> = list
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => {
                    Some((u32::try_from(e.partition()).ok()?, u64::try_from(o).ok()?))
                }
                _ => None,
            })
            .collect();
        positions.sort_unstable();
        Ok(positions)
    }

    /// Waits up to `timeout` for the first record, then takes what is already buffered; the
    /// records replace `held`.
    pub fn poll(&mut self, max_records: u32, timeout: Duration) -> KafkaResult<&[HeldRecord]> {
        self.held.clear();
        if let Some(error) = self.deferred.take() {
            return Err(error);
        }
        let max = max_records.max(1) as usize;
        let deadline = Instant::now() + timeout;
        let mut wait = timeout;
        while self.held.len() < max {
            match self.consumer.poll(wait) {
                Some(Ok(message)) => {
                    self.held.push(HeldRecord {
                        partition: u32::try_from(message.partition()).unwrap_or(0),
                        offset: u64::try_from(message.offset()).unwrap_or(0),
                        key: message.key().map(Payload::decode),
                        value: message.payload().map(Payload::decode),
                    });
                    wait = Duration::ZERO;
                }
                Some(Err(e)) if self.held.is_empty() => return Err(from_rd(&e)),
                Some(Err(e)) => {
                    // Records already taken are handed out; the error comes with the next poll.
                    self.deferred = Some(from_rd(&e));
                    break;
                }
                None if self.held.is_empty() && Instant::now() < deadline => {
                    wait = deadline.saturating_duration_since(Instant::now());
                }
                None => break,
            }
        }
        Ok(&self.held)
    }
}

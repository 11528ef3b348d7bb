//! `kafka-consumer`: an assign-only consumer that keeps the records of its latest poll, so the
//! runtime receives them without their keys and values ever crossing into the guest.

use std::collections::VecDeque;
use std::time::Duration;

use action_state_kafka::capabilities::{Columns, record_flags};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::{Offset, TopicPartitionList};

use super::batch::{ConsumerQueue, Taken};
use super::errors::{KafkaError, KafkaResult, from_rd, invalid};

/// A record of the latest poll, as the client delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRecord {
    pub partition: u32,
    pub offset: u64,
    pub key: Option<Payload>,
    pub value: Option<Payload>,
    /// Milliseconds since the Unix epoch; -1 when the record has none.
    pub timestamp: i64,
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
/// record `i`, flags as `record_flags` defines them, texts and timestamps only when asked for.
pub fn columns(held: &[HeldRecord], with_data: bool) -> Columns {
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
        columns.timestamps = held.iter().map(|r| r.timestamp).collect();
    }
    columns
}

pub struct Consumer {
    topic: String,
    /// Declared before `consumer`: a queue reference must be released before its client.
    queue: ConsumerQueue,
    consumer: BaseConsumer,
    /// What the client delivered after an error event, the error first: not handed out yet.
    backlog: Backlog,
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
        let consumer: BaseConsumer = config.create().map_err(|e| from_rd(&e))?;
        Ok(Consumer {
            topic: topic.to_owned(),
            queue: ConsumerQueue::of(&consumer)?,
            consumer,
            backlog: Backlog::default(),
            held: Vec::new(),
        })
    }

    pub fn assign(&mut self, start: &[(u32, u64)]) -> KafkaResult<()> {
        // A new assignment starts a new read: what is left of the old one is moot.
        self.backlog = Backlog::default();
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

    /// The client's positions, except that a partition with records in the backlog is still at
    /// the first of them: the client counts them as delivered, the component has not seen them.
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
        self.backlog.hold_back(&mut positions);
        positions.sort_unstable();
        Ok(positions)
    }

    /// Takes what the client has buffered; only when that is nothing, waits up to `timeout` for
    /// the first record and then takes what arrived with it. The records replace `held`.
    pub fn poll(&mut self, max_records: u32, timeout: Duration) -> KafkaResult<&[HeldRecord]> {
        self.held.clear();
        let max = max_records.max(1) as usize;
        if self.backlog.is_empty() {
            self.take(max, Duration::ZERO);
            if self.held.is_empty() && self.backlog.is_empty() {
                self.take(1, timeout);
                if !self.held.is_empty() && self.backlog.is_empty() {
                    self.take(max - 1, Duration::ZERO);
                }
            }
            if !self.held.is_empty() {
                return Ok(&self.held);
            }
        }
        self.backlog.serve(max, &mut self.held)?;
        Ok(&self.held)
    }

    /// One batch from the client: records into `held` until an error event, which and whatever
    /// follows it go to the backlog.
    fn take(&mut self, max: usize, timeout: Duration) {
        if max == 0 {
            return;
        }
        let (held, backlog) = (&mut self.held, &mut self.backlog);
        self.queue.take(max, timeout, |taken| {
            let item = match taken {
                Taken::Error(error) => Err(error),
                Taken::Record {
                    partition,
                    offset,
                    key,
                    payload,
                    timestamp,
                } => Ok(HeldRecord {
                    partition: u32::try_from(partition).unwrap_or(0),
                    offset: u64::try_from(offset).unwrap_or(0),
                    key: key.map(Payload::decode),
                    value: payload.map(Payload::decode),
                    timestamp,
                }),
            };
            match item {
                Ok(record) if backlog.is_empty() => held.push(record),
                item => backlog.push(item),
            }
        });
    }
}

/// Records and error events the client delivered but a poll has not handed out yet, in order.
#[derive(Debug, Default)]
pub struct Backlog(VecDeque<Result<HeldRecord, KafkaError>>);

impl Backlog {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, item: Result<HeldRecord, KafkaError>) {
        self.0.push_back(item);
    }

    /// Hands out up to `max` records, stopping before an error; an error at the front is the
    /// poll's answer (records taken before it were handed out by the previous poll).
    pub fn serve(&mut self, max: usize, held: &mut Vec<HeldRecord>) -> KafkaResult<()> {
        while held.len() < max {
            match self.0.pop_front() {
                None => break,
                Some(Ok(record)) => held.push(record),
                Some(Err(error)) if held.is_empty() => return Err(error),
                Some(Err(error)) => {
                    self.0.push_front(Err(error));
                    break;
                }
            }
        }
        Ok(())
    }

    /// Lowers each position to the first record of its partition still in the backlog.
    pub fn hold_back(&self, positions: &mut [(u32, u64)]) {
        for record in self.0.iter().filter_map(|item| item.as_ref().ok()) {
            for (partition, position) in positions.iter_mut() {
                if *partition == record.partition {
                    *position = (*position).min(record.offset);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::ErrorKind;

    fn record(partition: u32, offset: u64) -> HeldRecord {
        HeldRecord {
            partition,
            offset,
            key: Some(Payload::decode(b"k")),
            value: None,
            timestamp: 1_764_000_000_000,
        }
    }

    fn error() -> KafkaError {
        KafkaError::new(ErrorKind::Transport, "broker down")
    }

    #[test]
    fn an_error_waits_for_the_poll_after_the_records_before_it() {
        let mut backlog = Backlog::default();
        backlog.push(Err(error()));
        backlog.push(Ok(record(0, 5)));
        backlog.push(Ok(record(0, 6)));
        let mut held = Vec::new();
        assert_eq!(
            backlog.serve(10, &mut held).map_err(|e| e.kind),
            Err(ErrorKind::Transport)
        );
        assert!(held.is_empty());
        backlog.serve(1, &mut held).unwrap();
        assert_eq!(held, [record(0, 5)]);
        held.clear();
        backlog.serve(10, &mut held).unwrap();
        assert_eq!(held, [record(0, 6)]);
        assert!(backlog.is_empty());
    }

    #[test]
    fn records_are_served_up_to_the_next_error_and_the_error_stays() {
        let mut backlog = Backlog::default();
        backlog.push(Ok(record(1, 0)));
        backlog.push(Err(error()));
        backlog.push(Ok(record(1, 1)));
        let mut held = Vec::new();
        backlog.serve(10, &mut held).unwrap();
        assert_eq!(held, [record(1, 0)]);
        held.clear();
        assert!(backlog.serve(10, &mut held).is_err());
        backlog.serve(10, &mut held).unwrap();
        assert_eq!(held, [record(1, 1)]);
    }

    #[test]
    fn positions_stay_at_the_first_record_not_handed_out() {
        let mut backlog = Backlog::default();
        backlog.push(Err(error()));
        backlog.push(Ok(record(2, 40)));
        backlog.push(Ok(record(2, 41)));
        let mut positions = vec![(1, 9), (2, 42)];
        backlog.hold_back(&mut positions);
        assert_eq!(positions, [(1, 9), (2, 40)]);
    }

    #[test]
    fn text_is_decoded_once_and_bytes_stay_bytes() {
        assert_eq!(Payload::decode(b"caf\xc3\xa9").text(), Some("café"));
        let binary = Payload::decode(b"\xff\x00");
        assert_eq!((binary.text(), binary.as_bytes()), (None, &b"\xff\x00"[..]));
        let record = HeldRecord {
            value: Some(binary),
            ..record(0, 0)
        };
        assert_eq!(
            record.flags(),
            record_flags::HAS_KEY | record_flags::HAS_VALUE
        );
    }
}

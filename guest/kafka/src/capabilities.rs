//! The capability contract 0.3 as the core sees it: one call per WIT import (`call::Call`), no
//! policy. The cleanup component answers calls with its imports, the host with its Kafka
//! clients, unit tests with an in-memory fake; `policy` builds every retry, wait and decoding
//! rule on top, once.

pub use action_state_format::kafka_error::{ErrorKind, GROUP_AUTHORIZATION_FAILED, KafkaError};

pub use crate::call::{Answer, Call, Kafka};
use crate::kafka_types::ConfigEntry;
pub use crate::kafka_types::PartitionRange;

pub type KafkaResult<T> = Result<T, KafkaError>;

/// `kafka-admin.topic-metadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    pub topic: String,
    pub topic_id: String,
    pub partitions: Vec<u32>,
    pub configs: Vec<ConfigEntry>,
    pub offsets: Vec<PartitionRange>,
    /// The smallest replica count over the partitions.
    pub replication_factor: u16,
}

/// One record of a poll, as a row of `PolledBatch` (control reads and tests work with rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolledRecord {
    pub partition: u32,
    pub offset: u64,
    pub has_key: bool,
    pub has_value: bool,
    pub utf8: bool,
    pub key: Option<String>,
    pub value: Option<String>,
    /// Milliseconds since the Unix epoch as Kafka keeps it (CreateTime or LogAppendTime); only
    /// in a poll with data, and absent when the record has none.
    pub timestamp: Option<i64>,
}

/// The bits of `kafka-consumer.polled-batch.flags`.
pub mod record_flags {
    pub const HAS_KEY: u8 = 1;
    pub const HAS_VALUE: u8 = 2;
    pub const UTF8: u8 = 4;

    /// The flags entry of a record.
    pub fn of(has_key: bool, has_value: bool, utf8: bool) -> u8 {
        let bit = |holds: bool, bit: u8| if holds { bit } else { 0 };
        bit(has_key, HAS_KEY) | bit(has_value, HAS_VALUE) | bit(utf8, UTF8)
    }
}

/// The columns of `kafka-consumer.polled-batch` as a host answers them: entry `i` of each is
/// record `i`; the texts and timestamps are empty, or one entry per record (a poll with data);
/// a timestamp below 0 means the record has none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    pub partitions: Vec<u32>,
    pub offsets: Vec<u64>,
    pub flags: Vec<u8>,
    pub keys: Vec<Option<String>>,
    pub values: Vec<Option<String>>,
    pub timestamps: Vec<i64>,
}

/// One poll's records: `Columns` that were checked. Built only through `from_columns` or
/// `from_records`, so every column has an entry for every record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolledBatch(Columns);

impl PolledBatch {
    /// Checks what a host answered: columns of one length (the texts and timestamps may be
    /// absent altogether) and no flag bit outside `record_flags`.
    pub fn from_columns(columns: Columns) -> KafkaResult<Self> {
        let c = &columns;
        let n = c.partitions.len();
        let optional_fits = |len: usize| len == 0 || len == n;
        if c.offsets.len() != n
            || c.flags.len() != n
            || !optional_fits(c.keys.len())
            || !optional_fits(c.values.len())
            || !optional_fits(c.timestamps.len())
        {
            return Err(KafkaError::new(
                ErrorKind::Other,
                format!(
                    "The host's poll answered columns of different lengths (partitions {n}, \
                     offsets {}, flags {}, keys {}, values {}, timestamps {})",
                    c.offsets.len(),
                    c.flags.len(),
                    c.keys.len(),
                    c.values.len(),
                    c.timestamps.len()
                ),
            ));
        }
        let known = record_flags::HAS_KEY | record_flags::HAS_VALUE | record_flags::UTF8;
        if let Some(bad) = c.flags.iter().find(|f| **f & !known != 0) {
            return Err(KafkaError::new(
                ErrorKind::Other,
                format!("The host's poll answered the unknown record flags {bad}"),
            ));
        }
        Ok(PolledBatch(columns))
    }

    pub fn from_records(records: impl IntoIterator<Item = PolledRecord>) -> Self {
        let mut c = Columns::default();
        for r in records {
            c.partitions.push(r.partition);
            c.offsets.push(r.offset);
            c.flags
                .push(record_flags::of(r.has_key, r.has_value, r.utf8));
            c.keys.push(r.key);
            c.values.push(r.value);
            c.timestamps.push(r.timestamp.unwrap_or(-1));
        }
        if c.keys.iter().chain(&c.values).all(Option::is_none) {
            c.keys.clear();
            c.values.clear();
        }
        if c.timestamps.iter().all(|t| *t < 0) {
            c.timestamps.clear();
        }
        PolledBatch(c)
    }

    pub fn len(&self) -> usize {
        self.0.partitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.partitions.is_empty()
    }

    /// Partition, offset and flags of each record, in order.
    pub fn rows(&self) -> impl Iterator<Item = (u32, u64, u8)> + '_ {
        self.0
            .partitions
            .iter()
            .zip(&self.0.offsets)
            .zip(&self.0.flags)
            .map(|((p, o), f)| (*p, *o, *f))
    }

    /// The records as rows, texts moved out.
    pub fn into_records(self) -> Vec<PolledRecord> {
        let Columns {
            partitions,
            offsets,
            flags,
            keys,
            values,
            timestamps,
        } = self.0;
        let (mut keys, mut values) = (keys.into_iter(), values.into_iter());
        let mut timestamps = timestamps.into_iter();
        partitions
            .into_iter()
            .zip(offsets)
            .zip(flags)
            .map(|((partition, offset), flags)| PolledRecord {
                partition,
                offset,
                has_key: flags & record_flags::HAS_KEY != 0,
                has_value: flags & record_flags::HAS_VALUE != 0,
                utf8: flags & record_flags::UTF8 != 0,
                key: keys.next().flatten(),
                value: values.next().flatten(),
                timestamp: timestamps.next().filter(|t| *t >= 0),
            })
            .collect()
    }
}

/// The seam between the core and a host: one method, which answers one capability call
/// (`Call`). Leaves answer calls (the component's imports, the host's Kafka clients, the
/// in-memory fake); layers wrap another `Capabilities`, look at a call or its answer and pass it
/// on. Writers and consumers are the leaf's own values, which calls on them carry by reference:
/// a layer keeps the leaf's types unless it needs state of its own per writer or consumer.
pub trait Capabilities {
    type Writer;
    type Consumer;

    fn call(&mut self, call: CallOn<'_, Self>) -> AnswerOf<Self>;
}

/// A call on the writers and consumers of `C`.
pub type CallOn<'a, C> = Call<'a, <C as Capabilities>::Writer, <C as Capabilities>::Consumer>;

/// What `C` answers a call with.
pub type AnswerOf<C> =
    KafkaResult<Answer<<C as Capabilities>::Writer, <C as Capabilities>::Consumer>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn row(partition: u32, offset: u64, key: Option<&str>, value: Option<&str>) -> PolledRecord {
        PolledRecord {
            partition,
            offset,
            has_key: key.is_some(),
            has_value: value.is_some(),
            utf8: true,
            key: key.map(Into::into),
            value: value.map(Into::into),
            timestamp: None,
        }
    }

    fn columns(partitions: &[u32], offsets: &[u64], flags: &[u8]) -> Columns {
        Columns {
            partitions: partitions.to_vec(),
            offsets: offsets.to_vec(),
            flags: flags.to_vec(),
            ..Columns::default()
        }
    }

    #[test]
    fn rows_survive_the_trip_through_columns() {
        let rows = vec![
            row(0, 7, Some("k"), Some("v")),
            PolledRecord {
                timestamp: Some(1_764_000_000_000),
                ..row(3, 9, Some("t"), None)
            },
            PolledRecord {
                utf8: false,
                ..row(1, 2, None, None)
            },
        ];
        let batch = PolledBatch::from_records(rows.clone());
        assert_eq!(
            batch.rows().collect::<Vec<_>>(),
            [(0, 7, 7), (3, 9, 5), (1, 2, 0)]
        );
        assert_eq!(batch.into_records(), rows);
    }

    #[test]
    fn a_batch_without_texts_or_times_keeps_no_such_columns() {
        let batch = PolledBatch::from_records(vec![row(0, 1, None, None)]);
        let again = PolledBatch::from_columns(columns(&[0], &[1], &[4]));
        assert_eq!(again, Ok(batch));
    }

    #[test]
    fn a_negative_timestamp_is_a_record_without_one() {
        let batch = PolledBatch::from_columns(Columns {
            timestamps: vec![-1, 5],
            ..columns(&[0, 0], &[1, 2], &[4, 4])
        })
        .unwrap();
        let times: Vec<Option<i64>> = batch.into_records().iter().map(|r| r.timestamp).collect();
        assert_eq!(times, [None, Some(5)]);
    }

    #[test]
    fn columns_of_different_lengths_are_refused_with_every_length() {
        let refused = PolledBatch::from_columns(columns(&[0, 0], &[1], &[7, 7]))
            .expect_err("offsets are short");
        assert_eq!(refused.kind, ErrorKind::Other);
        assert_eq!(
            refused.message,
            "The host's poll answered columns of different lengths (partitions 2, offsets 1, \
             flags 2, keys 0, values 0, timestamps 0)"
        );
        let texts = PolledBatch::from_columns(Columns {
            keys: vec![None, None],
            ..columns(&[0], &[1], &[7])
        });
        assert!(texts.is_err(), "{texts:?}");
        let times = PolledBatch::from_columns(Columns {
            timestamps: vec![1, 2],
            ..columns(&[0], &[1], &[7])
        });
        assert!(times.is_err(), "{times:?}");
    }

    #[test]
    fn unknown_flag_bits_are_refused() {
        let refused = PolledBatch::from_columns(columns(&[0], &[1], &[8 | 7]))
            .expect_err("bit 8 is not defined");
        assert_eq!(
            refused.message,
            "The host's poll answered the unknown record flags 15"
        );
    }
}

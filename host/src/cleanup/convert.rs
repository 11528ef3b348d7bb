//! Conversions between the core's capability types and the generated WIT types, in one place.

use action_state_format::offsets::PartitionOffsets;
use action_state_kafka::capabilities as caps;
use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};

use super::bindings::action_state::cleanup::{kafka_admin, kafka_consumer, types};

/// The one table from the core's error kinds to the WIT `kafka-error` cases.
impl From<caps::KafkaError> for types::KafkaError {
    fn from(e: caps::KafkaError) -> Self {
        use caps::ErrorKind;
        use types::KafkaError as W;
        let detail = types::KafkaDetail {
            code: e.code,
            name: e.name,
            message: e.message,
        };
        match e.kind {
            ErrorKind::UnknownTopic => W::UnknownTopic(detail),
            ErrorKind::Authorization => W::Authorization(detail),
            ErrorKind::Authentication => W::Authentication(detail),
            ErrorKind::Timeout => W::Timeout(detail),
            ErrorKind::Transport => W::Transport(detail),
            ErrorKind::NotLeader => W::NotLeader(detail),
            ErrorKind::Fenced => W::Fenced(detail),
            ErrorKind::PolicyViolation => W::PolicyViolation(detail),
            ErrorKind::OffsetOutOfRange => W::OffsetOutOfRange(detail),
            ErrorKind::Other => W::Other(detail),
        }
    }
}

fn config_entries(entries: Vec<ConfigEntry>) -> Vec<kafka_admin::ConfigEntry> {
    entries
        .into_iter()
        .map(|ConfigEntry { name, value }| kafka_admin::ConfigEntry { name, value })
        .collect()
}

/// The guest's configuration entries (`create-topic`), as it sent them.
pub fn core_config_entries(entries: Vec<kafka_admin::ConfigEntry>) -> Vec<ConfigEntry> {
    entries
        .into_iter()
        .map(|kafka_admin::ConfigEntry { name, value }| ConfigEntry { name, value })
        .collect()
}

impl From<caps::TopicMetadata> for kafka_admin::TopicMetadata {
    fn from(t: caps::TopicMetadata) -> Self {
        kafka_admin::TopicMetadata {
            topic: t.topic,
            topic_id: t.topic_id,
            partitions: t.partitions,
            configs: config_entries(t.configs),
            offsets: t
                .offsets
                .into_iter()
                .map(|r| kafka_admin::PartitionRange {
                    partition: r.partition,
                    beginning: r.beginning,
                    end: r.end,
                })
                .collect(),
            replication_factor: t.replication_factor,
        }
    }
}

impl From<ClusterDescription> for kafka_admin::ClusterDescription {
    fn from(c: ClusterDescription) -> Self {
        kafka_admin::ClusterDescription {
            brokers: c.brokers,
            configs: config_entries(c.configs),
        }
    }
}

impl From<kafka_admin::OffsetSpec> for OffsetSpec {
    fn from(spec: kafka_admin::OffsetSpec) -> Self {
        match spec {
            kafka_admin::OffsetSpec::Earliest => OffsetSpec::Earliest,
            kafka_admin::OffsetSpec::Latest => OffsetSpec::Latest,
        }
    }
}

/// The guest's offsets, one per partition. The guest controls the list: a partition named twice
/// keeps its last offset (the component sends each partition once, ascending).
pub fn partition_offsets(list: &[types::PartitionOffset]) -> PartitionOffsets {
    list.iter().map(|po| (po.partition, po.offset)).collect()
}

pub fn offset_list(pairs: impl IntoIterator<Item = (u32, u64)>) -> Vec<types::PartitionOffset> {
    pairs
        .into_iter()
        .map(|(partition, offset)| types::PartitionOffset { partition, offset })
        .collect()
}

/// What the guest sees of a poll. The texts are a column per record when the poll asked for
/// data, and absent otherwise, unless the host sent some anyway (the guest then sees them: its
/// conformance check must).
pub fn polled(batch: caps::PolledBatch, with_data: bool) -> kafka_consumer::PolledBatch {
    let n = batch.len();
    let mut wit = kafka_consumer::PolledBatch {
        partitions: Vec::with_capacity(n),
        offsets: Vec::with_capacity(n),
        flags: Vec::with_capacity(n),
        keys: Vec::new(),
        values: Vec::new(),
        timestamps: Vec::new(),
    };
    for (partition, offset, flags) in batch.rows() {
        wit.partitions.push(partition);
        wit.offsets.push(offset);
        wit.flags.push(flags);
    }
    let records = batch.into_records();
    if with_data || records.iter().any(|r| r.key.is_some() || r.value.is_some()) {
        wit.timestamps = records.iter().map(|r| r.timestamp.unwrap_or(-1)).collect();
        (wit.keys, wit.values) = records.into_iter().map(|r| (r.key, r.value)).unzip();
    }
    wit
}

#[cfg(test)]
mod tests {
    use super::*;
    use action_state_kafka::capabilities::PolledRecord;

    fn row(offset: u64, key: Option<&str>) -> PolledRecord {
        PolledRecord {
            partition: 3,
            offset,
            has_key: true,
            has_value: false,
            utf8: key.is_some(),
            key: key.map(Into::into),
            value: None,
            timestamp: None,
        }
    }

    #[test]
    fn a_poll_with_data_has_a_text_entry_per_record_even_when_none_is_text() {
        let batch = caps::PolledBatch::from_records([row(7, None), row(8, None)]);
        let wit = polled(batch, true);
        assert_eq!((wit.partitions, wit.offsets), (vec![3, 3], vec![7, 8]));
        assert_eq!(wit.flags, [1, 1]);
        assert_eq!((wit.keys, wit.values), (vec![None, None], vec![None, None]));
    }

    #[test]
    fn a_poll_without_data_has_no_text_columns() {
        let batch = caps::PolledBatch::from_records([row(7, None)]);
        let wit = polled(batch, false);
        assert_eq!(wit.flags, [1]);
        assert!(wit.keys.is_empty() && wit.values.is_empty());
    }

    #[test]
    fn texts_a_host_sent_without_being_asked_reach_the_guest() {
        let batch = caps::PolledBatch::from_records([row(7, Some("k")), row(8, None)]);
        let wit = polled(batch, false);
        assert_eq!(wit.keys, [Some("k".to_owned()), None]);
        assert_eq!(wit.values, [None, None]);
    }

    #[test]
    fn the_guests_offsets_keep_one_entry_per_partition_in_order() {
        let po = |partition, offset| types::PartitionOffset { partition, offset };
        let offsets = partition_offsets(&[po(2, 5), po(0, 1), po(2, 6)]);
        assert_eq!(offsets.iter().collect::<Vec<_>>(), [(0, 1), (2, 6)]);
        let back: Vec<(u32, u64)> = offset_list(offsets.iter())
            .iter()
            .map(|po| (po.partition, po.offset))
            .collect();
        assert_eq!(back, [(0, 1), (2, 6)]);
    }
}

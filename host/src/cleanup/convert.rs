//! Conversions between the host's Kafka types and the generated WIT types, in one place.

use super::bindings::action_state::cleanup::{kafka_admin, kafka_consumer, types};
use crate::kafka::admin::{ClusterInfo, TopicInfo};
use crate::kafka::consumer::{Columns, HeldRecord};
use crate::kafka::{ErrorKind, HostError};

/// The one table from the core's error kinds to the WIT `kafka-error` cases.
impl From<HostError> for types::KafkaError {
    fn from(e: HostError) -> Self {
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

impl From<TopicInfo> for kafka_admin::TopicMetadata {
    fn from(t: TopicInfo) -> Self {
        kafka_admin::TopicMetadata {
            topic: t.topic,
            topic_id: t.topic_id,
            partitions: t.partitions,
            configs: t
                .configs
                .into_iter()
                .map(|(name, value)| kafka_admin::ConfigEntry { name, value })
                .collect(),
            offsets: t
                .offsets
                .into_iter()
                .map(|(partition, beginning, end)| kafka_admin::PartitionRange {
                    partition,
                    beginning,
                    end,
                })
                .collect(),
            replication_factor: t.replication_factor,
        }
    }
}

impl From<ClusterInfo> for kafka_admin::ClusterDescription {
    fn from(c: ClusterInfo) -> Self {
        kafka_admin::ClusterDescription {
            brokers: c.brokers,
            configs: c
                .configs
                .into_iter()
                .map(|(name, value)| kafka_admin::ConfigEntry { name, value })
                .collect(),
        }
    }
}

/// What the guest sees of a poll: the held records' columns, texts only when asked for.
pub fn polled(held: &[HeldRecord], with_data: bool) -> kafka_consumer::PolledBatch {
    let c = Columns::of(held, with_data);
    kafka_consumer::PolledBatch {
        partitions: c.partitions,
        offsets: c.offsets,
        flags: c.flags,
        keys: c.keys,
        values: c.values,
    }
}

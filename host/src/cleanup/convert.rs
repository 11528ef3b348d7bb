//! Conversions between the host's Kafka types and the generated WIT types, in one place.

use super::bindings::action_state::cleanup::{kafka_admin, kafka_consumer, types};
use crate::kafka::admin::TopicInfo;
use crate::kafka::consumer::HeldRecord;
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
        }
    }
}

/// What the guest sees of a held record; texts only when asked for (control reads).
pub fn polled(r: &HeldRecord, with_data: bool) -> kafka_consumer::PolledRecord {
    let utf8 = r.utf8();
    let text = |bytes: &Option<Vec<u8>>| {
        bytes
            .as_deref()
            .filter(|_| with_data && utf8)
            .and_then(|b| std::str::from_utf8(b).ok())
            .map(str::to_owned)
    };
    kafka_consumer::PolledRecord {
        partition: r.partition,
        offset: r.offset,
        has_key: r.key.is_some(),
        has_value: r.value.is_some(),
        utf8,
        key: text(&r.key),
        value: text(&r.value),
    }
}

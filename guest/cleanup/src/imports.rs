//! The core's `Capabilities` over the WIT imports: each method is exactly one import call, no
//! policy (that is `action_state_kafka::policy`). Answers are converted here; their shape is checked by the
//! policy, since the host is not part of the audited core.

use action_state_kafka::capabilities::{
    Columns, KafkaResult, PartitionRange, PolledBatch, TopicMetadata,
};
use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_kafka::leaf::Operations;

use crate::bindings::action_state::cleanup::{
    clock, kafka_admin, kafka_consumer, kafka_writer, operator_events,
};
use crate::convert::{from_offsets, to_offsets};

/// The host's imports, as the core sees them.
pub struct HostCaps;

/// The protocols' Kafka: every policy over the host's plain capabilities.
pub type HostKafka = action_state_kafka::policy::Policy<HostCaps>;

pub fn host_kafka() -> HostKafka {
    action_state_kafka::policy::Policy::new(HostCaps)
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|t| (*t).to_owned()).collect()
}

fn pairs(
    offsets: Vec<crate::bindings::action_state::cleanup::types::PartitionOffset>,
) -> Vec<(u32, u64)> {
    offsets
        .into_iter()
        .map(|po| (po.partition, po.offset))
        .collect()
}

impl From<kafka_admin::ConfigEntry> for ConfigEntry {
    fn from(c: kafka_admin::ConfigEntry) -> Self {
        ConfigEntry {
            name: c.name,
            value: c.value,
        }
    }
}

impl From<kafka_admin::TopicMetadata> for TopicMetadata {
    fn from(m: kafka_admin::TopicMetadata) -> Self {
        TopicMetadata {
            topic: m.topic,
            topic_id: m.topic_id,
            partitions: m.partitions,
            configs: m.configs.into_iter().map(Into::into).collect(),
            offsets: m
                .offsets
                .into_iter()
                .map(|r| PartitionRange {
                    partition: r.partition,
                    beginning: r.beginning,
                    end: r.end,
                })
                .collect(),
            replication_factor: m.replication_factor,
        }
    }
}

/// A poll's columns as the host answered them, checked for equal lengths and known flags.
fn polled_batch(batch: kafka_consumer::PolledBatch) -> KafkaResult<PolledBatch> {
    PolledBatch::from_columns(Columns {
        partitions: batch.partitions,
        offsets: batch.offsets,
        flags: batch.flags,
        keys: batch.keys,
        values: batch.values,
        timestamps: batch.timestamps,
    })
}

impl Operations for HostCaps {
    type Writer = kafka_writer::Writer;
    type Consumer = kafka_consumer::Consumer;

    fn append(
        &mut self,
        writer: &mut kafka_writer::Writer,
        topic: &str,
        partition: u32,
        key: &str,
        value: &str,
    ) -> KafkaResult<u64> {
        Ok(writer.append(topic, partition, key, value)?)
    }

    fn assign(
        &mut self,
        consumer: &mut kafka_consumer::Consumer,
        start: &action_state_format::PartitionOffsets,
    ) -> KafkaResult<()> {
        Ok(consumer.assign(&from_offsets(start))?)
    }

    fn position(
        &mut self,
        consumer: &mut kafka_consumer::Consumer,
    ) -> KafkaResult<action_state_format::PartitionOffsets> {
        Ok(to_offsets(&consumer.position()?))
    }

    fn poll(
        &mut self,
        consumer: &mut kafka_consumer::Consumer,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        polled_batch(consumer.poll(max_records, timeout_ms, with_data)?)
    }

    fn now_ms(&mut self) -> u64 {
        clock::now_ms()
    }

    fn sleep_ms(&mut self, ms: u32) {
        clock::sleep_ms(ms);
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        clock::operation_timeout_ms()
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        operator_events::retrying(message, remaining_ms);
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let answer = kafka_admin::describe(&owned(topics), &owned(config_names), with_offsets)?;
        Ok(answer.into_iter().map(|m| m.map(Into::into)).collect())
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        let answer = kafka_admin::describe_cluster(&owned(config_names))?;
        Ok(ClusterDescription {
            brokers: answer.brokers,
            configs: answer.configs.into_iter().map(Into::into).collect(),
        })
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let configs: Vec<kafka_admin::ConfigEntry> = configs
            .iter()
            .map(|c| kafka_admin::ConfigEntry {
                name: c.name.clone(),
                value: c.value.clone(),
            })
            .collect();
        Ok(kafka_admin::create_topic(
            topic,
            partitions,
            replication_factor,
            &configs,
        )?)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let spec = match spec {
            OffsetSpec::Earliest => kafka_admin::OffsetSpec::Earliest,
            OffsetSpec::Latest => kafka_admin::OffsetSpec::Latest,
        };
        Ok(pairs(kafka_admin::list_offsets(topic, partitions, spec)?))
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &action_state_format::PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        Ok(pairs(kafka_admin::delete_records(
            topic,
            &from_offsets(before),
        )?))
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<kafka_writer::Writer> {
        Ok(kafka_writer::Writer::open(transactional_id)?)
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<kafka_consumer::Consumer> {
        Ok(kafka_consumer::Consumer::open(topic)?)
    }
}

/// Forwards the pre-commit preview to the host.
pub struct HostObserver;

impl action_state_protocol::apply::ApplyObserver for HostObserver {
    fn before_commit(
        &mut self,
        plan: &action_state_format::Plan,
        preview: &[action_state_protocol::PartitionPreview],
        created: Option<&action_state_protocol::apply::NewControlTopic>,
    ) -> action_state_protocol::Review {
        let preview: Vec<operator_events::PartitionPreview> =
            preview.iter().map(|p| (*p).into()).collect();
        let created = created.map(Into::into);
        match operator_events::before_commit(&plan.plan_id, &preview, created.as_ref()) {
            operator_events::Review::Proceed => action_state_protocol::Review::Proceed,
            operator_events::Review::Decline => action_state_protocol::Review::Decline,
        }
    }

    fn committed(&mut self, plan: &action_state_format::Plan) {
        operator_events::committed(&plan.plan_id);
    }
}

impl From<&action_state_protocol::apply::NewControlTopic> for operator_events::NewControlTopic {
    fn from(created: &action_state_protocol::apply::NewControlTopic) -> Self {
        operator_events::NewControlTopic {
            name: created.topic.clone(),
            partitions: created.partitions,
            replication_factor: created.replication_factor,
            min_insync_replicas: created.min_insync_replicas,
        }
    }
}

impl From<action_state_protocol::PartitionPreview> for operator_events::PartitionPreview {
    fn from(p: action_state_protocol::PartitionPreview) -> Self {
        operator_events::PartitionPreview {
            partition: p.partition,
            beginning: p.beginning,
            boundary: p.boundary,
            end: p.end,
            records_to_delete: p.records_to_delete,
        }
    }
}

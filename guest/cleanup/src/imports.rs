//! `KafkaOps` over the WIT imports: each method is exactly one capability call. Values the host
//! returns are checked here, since the host is not part of the audited core.

use action_state_core as core;
use core::ops::{ConfigEntry, KafkaOps, KafkaResult, OffsetSpec, TopicDescription};

use crate::bindings::action_state::cleanup::{control_log, kafka_admin, operator_events};
use crate::convert::{from_offsets, to_offsets};

/// The host's Kafka, as the core protocols see it.
pub struct HostKafka;

fn owned(topics: &[&str]) -> Vec<String> {
    topics.iter().map(|t| (*t).to_owned()).collect()
}

/// A host that answers with the wrong number of items breaks the capability contract.
fn host_contract(operation: &str, why: String) -> core::KafkaError {
    core::KafkaError {
        operation: operation.into(),
        message: format!("the host broke the capability contract: {why}"),
        retriable: false,
    }
}

impl KafkaOps for HostKafka {
    fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<core::ops::TopicState>>> {
        let answer = kafka_admin::inspect_topics(&owned(topics), &owned(names))
            .map_err(core::KafkaError::from)?;
        if answer.len() != topics.len() {
            return Err(host_contract(
                "inspect-topics",
                format!("{} answers for {} topics", answer.len(), topics.len()),
            ));
        }
        Ok(answer
            .into_iter()
            .map(|state| {
                state.map(|s| {
                    let mut partitions = s.description.partitions;
                    partitions.sort_unstable();
                    partitions.dedup();
                    core::ops::TopicState {
                        description: TopicDescription {
                            topic: s.description.topic,
                            topic_id: s.description.topic_id,
                            partitions,
                        },
                        configs: s
                            .configs
                            .into_iter()
                            .map(|c| ConfigEntry {
                                name: c.name,
                                value: c.value,
                            })
                            .collect(),
                    }
                })
            })
            .collect())
    }

    fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> KafkaResult<Vec<core::ops::PartitionRange>> {
        let answer =
            kafka_admin::offset_range(topic, partitions).map_err(core::KafkaError::from)?;
        Ok(answer
            .into_iter()
            .map(|r| (r.partition, r.beginning, r.end))
            .collect())
    }

    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>> {
        let answer =
            kafka_admin::describe_topics(&owned(topics)).map_err(core::KafkaError::from)?;
        if answer.len() != topics.len() {
            return Err(host_contract(
                "describe-topics",
                format!("{} answers for {} topics", answer.len(), topics.len()),
            ));
        }
        Ok(answer
            .into_iter()
            .map(|d| {
                d.map(|d| {
                    let mut partitions = d.partitions;
                    partitions.sort_unstable();
                    partitions.dedup();
                    TopicDescription {
                        topic: d.topic,
                        topic_id: d.topic_id,
                        partitions,
                    }
                })
            })
            .collect())
    }

    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>> {
        let answer = kafka_admin::describe_configs(&owned(topics), &owned(names))
            .map_err(core::KafkaError::from)?;
        if answer.len() != topics.len() {
            return Err(host_contract(
                "describe-configs",
                format!("{} answers for {} topics", answer.len(), topics.len()),
            ));
        }
        Ok(answer
            .into_iter()
            .map(|entries| {
                entries
                    .into_iter()
                    .map(|e| ConfigEntry {
                        name: e.name,
                        value: e.value,
                    })
                    .collect()
            })
            .collect())
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
        kafka_admin::create_topic(topic, partitions, replication_factor, &configs)
            .map_err(core::KafkaError::from)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<core::PartitionOffsets> {
        let spec = match spec {
            OffsetSpec::Earliest => kafka_admin::OffsetSpec::Earliest,
            OffsetSpec::Latest => kafka_admin::OffsetSpec::Latest,
        };
        let answer =
            kafka_admin::list_offsets(topic, partitions, spec).map_err(core::KafkaError::from)?;
        Ok(to_offsets(&answer))
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &core::PartitionOffsets,
    ) -> KafkaResult<core::PartitionOffsets> {
        let answer = kafka_admin::delete_records(topic, &from_offsets(before))
            .map_err(core::KafkaError::from)?;
        Ok(to_offsets(&answer))
    }

    fn read_control_log(&mut self, topic: &str) -> KafkaResult<Vec<core::ControlEntry>> {
        let entries = control_log::read_all(topic).map_err(core::KafkaError::from)?;
        Ok(entries.into_iter().map(Into::into).collect())
    }

    fn fence_control(&mut self, topic: &str) -> KafkaResult<()> {
        control_log::fence(topic).map_err(core::KafkaError::from)
    }

    fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> Result<u64, core::ops::AppendError> {
        control_log::append(topic, key, value, fenced).map_err(|error| match error {
            control_log::AppendError::Fenced(why) => core::ops::AppendError::Fenced(why),
            control_log::AppendError::Failed(kafka) => core::ops::AppendError::Failed(kafka.into()),
        })
    }
}

/// Forwards the pre-commit preview to the host.
pub struct HostObserver;

impl core::apply::ApplyObserver for HostObserver {
    fn before_commit(&mut self, plan: &core::Plan, preview: &[core::PartitionPreview]) {
        let preview: Vec<operator_events::PartitionPreview> =
            preview.iter().map(|p| (*p).into()).collect();
        operator_events::before_commit(&plan.plan_id, &preview);
    }
}

impl From<core::PartitionPreview> for operator_events::PartitionPreview {
    fn from(p: core::PartitionPreview) -> Self {
        operator_events::PartitionPreview {
            partition: p.partition,
            beginning: p.beginning,
            boundary: p.boundary,
            end: p.end,
            records_to_delete: p.records_to_delete,
        }
    }
}

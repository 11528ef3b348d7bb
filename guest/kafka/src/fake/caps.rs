//! The fake cluster behind the capabilities: one method per WIT import, each one counted
//! (`Cluster::calls`, `Cluster::trace`) and open to failure injection.

use std::cell::RefMut;

use super::{
    Cluster, DATA, FakeConsumer, FakeTopic, FakeWriter, Fault, Shared, TOPIC_ID, error, safe_topic,
};
use crate::capabilities::{ErrorKind, KafkaResult, PartitionRange, PolledBatch, TopicMetadata};
use crate::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use crate::leaf::Operations;
use action_state_format::offsets::PartitionOffsets;

/// The fake cluster as the capabilities of one host; clones share the cluster.
#[derive(Clone)]
pub struct FakeCaps(pub Shared);

impl FakeCaps {
    /// The cluster of the protocol tests: the data topic `DATA` (`TOPIC_ID`) with partitions 0
    /// and 1, the safe configuration, beginnings 0 and ends 1,000; one broker whose default
    /// replication factor is 1.
    pub fn new() -> Self {
        let cluster = Cluster::new();
        {
            let mut c = cluster.borrow_mut();
            c.topics
                .insert(DATA.into(), safe_topic(TOPIC_ID, &[0, 1], 1_000));
            c.brokers(1, "1");
        }
        FakeCaps(cluster)
    }

    /// A policy over this cluster, as each call of a host (one CLI command, one export) has.
    pub fn policy(&self) -> crate::policy::Policy<FakeCaps> {
        crate::policy::Policy::new(FakeCaps(self.0.clone()))
    }

    pub fn c(&self) -> RefMut<'_, Cluster> {
        self.0.borrow_mut()
    }

    pub fn data(&self) -> RefMut<'_, FakeTopic> {
        RefMut::map(self.0.borrow_mut(), Cluster::data)
    }

    pub fn fail_on(&self, operation: &'static str, call: u32, fault: Fault) {
        self.c().fail_on(operation, call, fault);
    }
}

impl Operations for FakeCaps {
    type Writer = FakeWriter;
    type Consumer = FakeConsumer;

    fn append(
        &mut self,
        writer: &mut FakeWriter,
        topic: &str,
        partition: u32,
        key: &str,
        value: &str,
    ) -> KafkaResult<u64> {
        writer.append(topic, partition, key, value)
    }

    fn assign(&mut self, consumer: &mut FakeConsumer, start: &PartitionOffsets) -> KafkaResult<()> {
        consumer.assign(start)
    }

    fn position(&mut self, consumer: &mut FakeConsumer) -> KafkaResult<PartitionOffsets> {
        consumer.position()
    }

    fn poll(
        &mut self,
        consumer: &mut FakeConsumer,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        consumer.poll(max_records, timeout_ms, with_data)
    }

    fn now_ms(&mut self) -> u64 {
        self.0.borrow().now
    }

    fn sleep_ms(&mut self, ms: u32) {
        let mut c = self.0.borrow_mut();
        c.now += u64::from(ms);
        c.slept.push(ms);
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        self.0.borrow().timeout_ms
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        let mut c = self.0.borrow_mut();
        let now = c.now;
        c.retried.push((message.to_owned(), remaining_ms, now));
    }

    fn describe(
        &mut self,
        topics: &[&str],
        names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let mut c = self.0.borrow_mut();
        c.enter("describe")?;
        let call = c.count("describe");
        let cluster = &mut *c;
        let lagging = topics.iter().any(|t| {
            let exists = cluster.topics.contains_key(*t);
            match cluster.unknown_partitions.get_mut(*t) {
                Some(n) if exists && *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            }
        });
        if lagging {
            return Err(error(ErrorKind::UnknownTopic));
        }
        let drop_zero = c.drop_partition_zero;
        let mut answer = Vec::new();
        for topic in topics {
            if let Some(n) = c.hidden.get_mut(*topic)
                && *n > 0
            {
                *n -= 1;
                answer.push(None);
                continue;
            }
            let configless = c.configless.get_mut(*topic).is_some_and(|n| {
                let lagging = *n > 0;
                *n = n.saturating_sub(1);
                lagging
            });
            let metadata = c.topics.get(*topic).map(|t| TopicMetadata {
                topic: (*topic).to_owned(),
                topic_id: t.topic_id.clone(),
                partitions: t.partitions.clone(),
                configs: names
                    .iter()
                    .map(|n| ConfigEntry {
                        name: (*n).to_owned(),
                        value: t.configs.get(*n).cloned().filter(|_| !configless),
                    })
                    .collect(),
                offsets: Vec::new(),
                replication_factor: t.replication_factor,
            });
            let recreated = c
                .recreate_before_offsets
                .take_if(|(n, t)| *n == call && t == topic)
                .is_some();
            if recreated && let Some(t) = c.topics.get_mut(*topic) {
                t.topic_id = format!("{}-recreated", t.topic_id);
                t.beginnings = t.partitions.iter().map(|p| (*p, 0)).collect();
            }
            answer.push(metadata.map(|mut m| {
                if let Some(t) = c.topics.get(*topic).filter(|_| with_offsets) {
                    m.offsets = t
                        .partitions
                        .iter()
                        .filter(|p| !(drop_zero && **p == 0))
                        .map(|p| PartitionRange {
                            partition: *p,
                            beginning: t.beginnings.get(*p).unwrap_or(0),
                            end: t.ends.get(*p).unwrap_or(0),
                        })
                        .collect();
                }
                m
            }));
        }
        Ok(answer)
    }

    fn describe_cluster(&mut self, names: &[&str]) -> KafkaResult<ClusterDescription> {
        let mut c = self.0.borrow_mut();
        c.enter("describe_cluster")?;
        let mut answer = c.cluster.clone();
        answer.configs.retain(|e| names.contains(&e.name.as_str()));
        Ok(answer)
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let mut c = self.0.borrow_mut();
        c.enter("create_topic")?;
        if c.topics.contains_key(topic) {
            return Ok(false);
        }
        let all: Vec<u32> = (0..partitions).collect();
        c.topic(topic, &all);
        if let Some(t) = c.topics.get_mut(topic) {
            t.replication_factor = replication_factor;
            for entry in configs {
                if let Some(value) = &entry.value {
                    t.configs.insert(entry.name.clone(), value.clone());
                }
            }
        }
        c.created_with.push((topic.to_owned(), replication_factor));
        c.events.push(format!("create:{topic}"));
        Ok(true)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let mut c = self.0.borrow_mut();
        c.enter("list_offsets")?;
        let lag = spec == OffsetSpec::Latest && c.stable_lag > 0 && c.lagging_end.is_some();
        let lagging = c.lagging_end;
        if lag {
            c.stable_lag -= 1;
        }
        let drop_zero = c.drop_partition_zero;
        let t = c
            .topics
            .get(topic)
            .ok_or_else(|| error(ErrorKind::UnknownTopic))?;
        Ok(partitions
            .iter()
            .filter(|p| !(drop_zero && **p == 0))
            .filter_map(|p| {
                let offset = match spec {
                    OffsetSpec::Earliest => t.beginnings.get(*p),
                    OffsetSpec::Latest if lag && *p == 0 => lagging,
                    OffsetSpec::Latest => t.ends.get(*p),
                };
                offset.map(|o| (*p, o))
            })
            .collect())
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let mut c = self.0.borrow_mut();
        // A delete at or below every current beginning removes nothing: it is a permission
        // probe, kept apart from the durable effects. Recorded before a failure, so tests see
        // attempts.
        let is_probe = c.topics.get(topic).is_some_and(|t| {
            before
                .iter()
                .all(|(p, o)| t.beginnings.get(p).is_some_and(|b| o <= b))
        });
        if is_probe {
            c.probes.push(format!("probe:{before}"));
        } else {
            c.events.push(format!("delete:{before}"));
        }
        c.enter("delete_records")?;
        let t = c
            .topics
            .get_mut(topic)
            .ok_or_else(|| error(ErrorKind::UnknownTopic))?;
        for (p, o) in before.iter() {
            let b = t.beginnings.get(p).unwrap_or(0).max(o);
            t.beginnings.insert(p, b);
        }
        Ok(before
            .iter()
            .map(|(p, _)| (p, t.beginnings.get(p).unwrap_or(0)))
            .collect())
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<FakeWriter> {
        let mut c = self.0.borrow_mut();
        c.enter("open_writer")?;
        c.opened.push(transactional_id.map(String::from));
        let epoch = match transactional_id {
            Some(id) => {
                let e = c.epochs.entry(id.to_owned()).or_insert(0);
                *e += 1;
                *e
            }
            None => 0,
        };
        Ok(FakeWriter {
            cluster: self.0.clone(),
            id: transactional_id.map(String::from),
            epoch,
        })
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<FakeConsumer> {
        self.0.borrow_mut().enter("open_consumer")?;
        Ok(FakeConsumer {
            cluster: self.0.clone(),
            topic: topic.to_owned(),
            positions: PartitionOffsets::new(),
        })
    }
}

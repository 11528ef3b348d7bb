//! An in-memory Kafka for unit tests of the protocols: topics with IDs, configs, beginnings and
//! ends, a control log, an event trace and failpoints keyed by call number.

use std::collections::BTreeMap;

use crate::control::ControlEntry;
use crate::error::KafkaError;
use crate::offsets::PartitionOffsets;
use crate::ops::{ConfigEntry, KafkaOps, KafkaResult, OffsetSpec, TopicDescription};

#[derive(Debug, Clone)]
pub struct FakeTopic {
    pub topic_id: String,
    pub partitions: Vec<u32>,
    pub configs: BTreeMap<String, String>,
    pub beginnings: PartitionOffsets,
    pub ends: PartitionOffsets,
}

/// What a failpoint does when its call comes.
#[derive(Debug, Clone)]
pub enum Fault {
    /// The call fails with a Kafka error.
    Fail,
    /// Before the call runs, the data topic is recreated with this ID.
    RecreateTopic(String),
    /// Before the call runs, the data topic's cleanup.policy becomes this value.
    SetPolicy(String),
}

#[derive(Debug, Default)]
pub struct FakeKafka {
    pub topics: BTreeMap<String, FakeTopic>,
    pub control_log: BTreeMap<String, Vec<ControlEntry>>,
    /// "append:COMMITTED", "delete:{0=10, 1=20}", "create:<topic>": the durable effects, in order.
    pub events: Vec<String>,
    /// Calls per operation name, for failpoints and round-trip counts.
    pub calls: BTreeMap<&'static str, u32>,
    /// (operation, call number starting at 1) → fault.
    pub faults: Vec<(&'static str, u32, Fault)>,
    /// A (key, value) another apply commits right before our next append, fencing us.
    pub concurrent_commit: Option<(String, String)>,
    /// Control topics this client fenced.
    pub fenced: Vec<String>,
    /// Delete-records calls that could delete nothing (permission probes).
    pub probes: Vec<String>,
    /// Every operation in call order.
    pub trace: Vec<&'static str>,
}

pub const DATA: &str = "action-state";
pub const CONTROL: &str = "action-state-control";

impl FakeKafka {
    /// A data topic with partitions 0 and 1, safe configuration, beginnings 0 and large ends.
    pub fn new() -> Self {
        let mut kafka = FakeKafka::default();
        kafka
            .topics
            .insert(DATA.into(), safe_topic("topic-id", &[0, 1], 1_000));
        kafka
    }

    pub fn fail_on(&mut self, operation: &'static str, call: u32, fault: Fault) {
        self.faults.push((operation, call, fault));
    }

    pub fn data(&mut self) -> &mut FakeTopic {
        self.topics
            .get_mut(DATA)
            .expect("the fake data topic exists")
    }

    pub fn total_calls(&self) -> u32 {
        self.calls.values().sum()
    }

    fn enter(&mut self, operation: &'static str) -> KafkaResult<()> {
        self.trace.push(operation);
        let count = self.calls.entry(operation).or_insert(0);
        *count += 1;
        let call = *count;
        let due: Vec<Fault> = self
            .faults
            .iter()
            .filter(|(op, n, _)| *op == operation && *n == call)
            .map(|(_, _, fault)| fault.clone())
            .collect();
        for fault in due {
            match fault {
                Fault::Fail => {
                    return Err(KafkaError {
                        operation: operation.into(),
                        message: format!("simulated failure of call {call}"),
                        retriable: true,
                    });
                }
                Fault::RecreateTopic(id) => self.data().topic_id = id,
                Fault::SetPolicy(policy) => {
                    self.data().configs.insert("cleanup.policy".into(), policy);
                }
            }
        }
        Ok(())
    }
}

pub fn safe_topic(id: &str, partitions: &[u32], end: u64) -> FakeTopic {
    let configs = [
        ("cleanup.policy", "compact,delete"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    FakeTopic {
        topic_id: id.into(),
        partitions: partitions.to_vec(),
        configs,
        beginnings: partitions.iter().map(|p| (*p, 0)).collect(),
        ends: partitions.iter().map(|p| (*p, end)).collect(),
    }
}

fn missing(operation: &str, topic: &str) -> KafkaError {
    KafkaError {
        operation: operation.into(),
        message: format!("unknown topic {topic}"),
        retriable: false,
    }
}

impl KafkaOps for FakeKafka {
    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>> {
        self.enter("describe_topics")?;
        Ok(topics
            .iter()
            .map(|name| {
                self.topics.get(*name).map(|t| TopicDescription {
                    topic: (*name).to_owned(),
                    topic_id: t.topic_id.clone(),
                    partitions: t.partitions.clone(),
                })
            })
            .collect())
    }

    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>> {
        self.enter("describe_configs")?;
        topics
            .iter()
            .map(|name| {
                let topic = self
                    .topics
                    .get(*name)
                    .ok_or_else(|| missing("describe_configs", name))?;
                Ok(names
                    .iter()
                    .map(|n| ConfigEntry {
                        name: (*n).to_owned(),
                        value: topic.configs.get(*n).cloned(),
                    })
                    .collect())
            })
            .collect()
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        _rf: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        self.enter("create_topic")?;
        if self.topics.contains_key(topic) {
            return Ok(false);
        }
        let partitions: Vec<u32> = (0..partitions).collect();
        let mut created = safe_topic(&format!("id-of-{topic}"), &partitions, 0);
        created.configs = configs
            .iter()
            .filter_map(|c| c.value.clone().map(|v| (c.name.clone(), v)))
            .collect();
        self.topics.insert(topic.to_owned(), created);
        self.events.push(format!("create:{topic}"));
        Ok(true)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<PartitionOffsets> {
        self.enter("list_offsets")?;
        let t = self
            .topics
            .get(topic)
            .ok_or_else(|| missing("list_offsets", topic))?;
        let source = match spec {
            OffsetSpec::Earliest => &t.beginnings,
            OffsetSpec::Latest => &t.ends,
        };
        Ok(partitions
            .iter()
            .filter_map(|p| source.get(*p).map(|o| (*p, o)))
            .collect())
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<PartitionOffsets> {
        // A delete at or below every current beginning removes nothing: it is a permission
        // probe, kept apart from the durable effects. Recorded before a simulated failure, like
        // the Java tests' fake, so tests see attempts.
        let is_probe = self.topics.get(topic).is_some_and(|t| {
            before
                .iter()
                .all(|(p, o)| t.beginnings.get(p).is_some_and(|b| o <= b))
        });
        if is_probe {
            self.probes.push(format!("probe:{before}"));
        } else {
            self.events.push(format!("delete:{before}"));
        }
        self.enter("delete_records")?;
        let t = self
            .topics
            .get_mut(topic)
            .ok_or_else(|| missing("delete_records", topic))?;
        for (partition, offset) in before.iter() {
            let beginning = t.beginnings.get(partition).unwrap_or(0);
            t.beginnings.insert(partition, beginning.max(offset));
        }
        Ok(before
            .iter()
            .filter_map(|(p, _)| t.beginnings.get(p).map(|b| (p, b)))
            .collect())
    }

    fn read_control_log(&mut self, topic: &str) -> KafkaResult<Vec<ControlEntry>> {
        self.enter("read_control_log")?;
        Ok(self.control_log.get(topic).cloned().unwrap_or_default())
    }

    fn fence_control(&mut self, topic: &str) -> KafkaResult<()> {
        self.enter("fence_control")?;
        self.fenced.push(topic.to_owned());
        Ok(())
    }

    fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> Result<u64, crate::ops::AppendError> {
        self.enter("append_control")
            .map_err(crate::ops::AppendError::Failed)?;
        if fenced && !self.fenced.iter().any(|t| t == topic) {
            return Err(crate::ops::AppendError::Fenced(
                "fence was not called".into(),
            ));
        }
        if !fenced && value.contains("\"status\":\"COMMITTED\"") {
            return Err(crate::ops::AppendError::Failed(KafkaError {
                operation: "append_control".into(),
                message: "a COMMITTED record must be written by the fenced writer".into(),
                retriable: false,
            }));
        }
        if let Some(writer) = self.concurrent_commit.take().filter(|_| fenced) {
            // Another apply fenced us and committed its own plan first.
            let log = self.control_log.entry(topic.to_owned()).or_default();
            let offset = log.len() as u64;
            log.push(ControlEntry {
                offset,
                key: Some(writer.0),
                value: Some(writer.1),
            });
            return Err(crate::ops::AppendError::Fenced(
                "producer fenced by a newer instance".into(),
            ));
        }
        let log = self.control_log.entry(topic.to_owned()).or_default();
        let offset = log.len() as u64;
        log.push(ControlEntry {
            offset,
            key: Some(key.into()),
            value: Some(value.into()),
        });
        let status = if value.contains("\"status\":\"COMMITTED\"") {
            "COMMITTED"
        } else {
            "APPLIED"
        };
        self.events.push(format!("append:{status}"));
        Ok(offset)
    }
}

/// A consumer over an in-memory log per partition; offsets may have gaps (compaction).
#[derive(Debug, Default)]
pub struct FakeSource {
    pub log: BTreeMap<u32, Vec<crate::replay::ConsumedRecord>>,
    /// Next offset to deliver per assigned partition.
    pub positions: PartitionOffsets,
    /// Polls that return nothing before the log is served (empty polls must not end replay).
    pub empty_polls: u32,
    /// When set, every poll returns nothing (a stalled broker).
    pub stalled: bool,
    pub assignments: Vec<PartitionOffsets>,
}

impl FakeSource {
    pub fn record(&mut self, partition: u32, offset: u64, key: &str, value: Option<&str>) {
        self.log
            .entry(partition)
            .or_default()
            .push(crate::replay::ConsumedRecord {
                partition,
                offset,
                key: Some(key.into()),
                value: value.map(Into::into),
                decode_error: None,
            });
    }
}

impl crate::replay::RecordSource for FakeSource {
    fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        self.positions = start.clone();
        self.assignments.push(start.clone());
        Ok(())
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        Ok(self.positions.clone())
    }

    fn poll(
        &mut self,
        max: u32,
        _timeout_ms: u32,
    ) -> KafkaResult<Vec<crate::replay::ConsumedRecord>> {
        if self.stalled {
            return Ok(Vec::new());
        }
        if self.empty_polls > 0 {
            self.empty_polls -= 1;
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for (partition, position) in self.positions.clone().iter() {
            let log = self.log.get(&partition).cloned().unwrap_or_default();
            let next_end = log.last().map_or(position, |r| r.offset + 1);
            for record in log.into_iter().filter(|r| r.offset >= position) {
                if out.len() as u32 >= max {
                    break;
                }
                self.positions.insert(partition, record.offset + 1);
                out.push(record);
            }
            // Like a real consumer, the position moves past the end of what the log holds.
            if out.len() < max as usize {
                self.positions.insert(
                    partition,
                    next_end.max(self.positions.get(partition).unwrap_or(0)),
                );
            }
        }
        Ok(out)
    }
}

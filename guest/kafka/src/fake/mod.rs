//! The one fake Kafka of the unit tests: an in-memory cluster behind the plain 0.3
//! capabilities (`FakeCaps`), so every protocol test runs through the real `Policy`. It has a
//! clock that sleeping advances, topics with IDs, configurations, beginnings, ends and record
//! logs, transactional ids with epochs, a record of the durable effects and of every call, and
//! failure injection keyed by capability call: host errors, and changes to the cluster right
//! before a call (a recreated topic, a changed configuration, a concurrent apply's control
//! topic or commit), topics that appear in metadata late and ends that lag behind a commit.

mod caps;
mod clients;

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

pub use caps::FakeCaps;
pub use clients::{FakeConsumer, FakeWriter};

use crate::capabilities::{ErrorKind, KafkaError, KafkaResult, PolledRecord};
use crate::kafka_types::ClusterDescription;
use action_state_format::offsets::PartitionOffsets;

pub const DATA: &str = "action-state";
pub const CONTROL: &str = "action-state-control";
/// The data topic's ID, in Kafka's form (the protocols compare it with plans and markers).
pub const TOPIC_ID: &str = "ygFlQI50RqmgPT_6YH-HZw";
/// Another Kafka topic ID: the data topic after it was deleted and created again.
pub const RECREATED_ID: &str = "_dCxXk8LR-qHr1Z2nQkB9w";

#[derive(Debug, Clone)]
pub struct FakeTopic {
    pub topic_id: String,
    pub partitions: Vec<u32>,
    pub configs: BTreeMap<String, String>,
    pub beginnings: PartitionOffsets,
    pub ends: PartitionOffsets,
    /// The smallest replica count over its partitions.
    pub replication_factor: u16,
}

/// What a failpoint does when its call comes (besides the scripted host errors of `script`).
#[derive(Debug, Clone)]
pub enum Fault {
    /// The call fails with a host error of case `other` (an answer, not retried).
    Fail,
    /// Before the call runs, the data topic is recreated with this ID.
    RecreateTopic(String),
    /// Before the call runs, the data topic is deleted and created again with this ID, its
    /// partitions and configuration, and no records (every partition from 0 to 0).
    RecreateEmptyTopic(String),
    /// Before the call runs, the data topic is deleted.
    DeleteTopic,
    /// Before the call runs, the data topic's cleanup.policy becomes this value.
    SetPolicy(String),
    /// The call has its effect, then fails as if its answer were lost (a leader died after
    /// writing: host error `timeout`). Only `append` honours it.
    LostAnswer,
    /// Before the call runs, a concurrent apply creates this control topic (one partition,
    /// compact).
    CreateControlTopic(String),
    /// The call fails as a principal without the ACL would (host error `authorization`).
    Unauthorized,
    /// Before the call runs, a concurrent apply commits this (key, value) to the control topic
    /// and then deletes: every beginning of the data topic moves 10 further.
    ConcurrentCleanup(String, String),
}

/// Consumer answers scripted poll by poll instead of read from the logs.
#[derive(Debug, Default)]
pub struct ScriptedPolls {
    /// (partition, offset) of each poll's records, in order.
    pub polls: VecDeque<Vec<(u32, u64)>>,
    /// What `position` answers once every scripted poll was handed out (before: nothing).
    pub ends: PartitionOffsets,
}

#[derive(Debug, Default)]
pub struct Cluster {
    pub now: u64,
    pub timeout_ms: u32,
    pub topics: BTreeMap<String, FakeTopic>,
    /// Records per (topic, partition); offsets may have gaps (transaction markers, compaction).
    pub logs: BTreeMap<(String, u32), Vec<PolledRecord>>,
    /// (operation, call number from 1) → the error that call returns.
    pub script: Vec<(&'static str, u32, KafkaError)>,
    /// (operation, call number from 1, fault): see `Fault`.
    pub faults: Vec<(&'static str, u32, Fault)>,
    /// Every call of `operation` ("*": of any) fails with this error (a dead cluster, a wrong
    /// password).
    pub always: Option<(&'static str, KafkaError)>,
    pub calls: BTreeMap<&'static str, u32>,
    /// Every capability call in order.
    pub trace: Vec<&'static str>,
    /// "create:<topic>", "append:COMMITTED", "append:APPLIED", "delete:{0=10, 1=20}": the
    /// durable effects, in order (deletes as attempted, also when the call then fails).
    pub events: Vec<String>,
    /// Delete-records requests that could delete nothing (permission probes), as attempted.
    pub probes: Vec<String>,
    /// Replication factor of every topic created, in order.
    pub created_with: Vec<(String, u16)>,
    /// A (key, value) another apply commits to the control topic right before our next
    /// transactional append, fencing our writer.
    pub concurrent_commit: Option<(String, String)>,
    /// Describe calls that still answer "missing" for a topic (metadata propagation).
    pub hidden: BTreeMap<String, u32>,
    /// Topic → how many more describes answer it without its configuration values (a
    /// broker that knows the topic but has not applied its configuration yet).
    pub configless: BTreeMap<String, u32>,
    /// Topic → how many more describes naming it, once it exists, fail with `unknown-topic`
    /// (a broker that knows the topic's name but not yet its partitions: librdkafka's
    /// ListOffsets answers UNKNOWN_TOPIC_OR_PARTITION for a topic created a moment ago).
    pub unknown_partitions: BTreeMap<String, u32>,
    /// List-offsets LATEST calls that still answer the end from before the last append.
    pub stable_lag: u32,
    pub lagging_end: Option<u64>,
    /// Current epoch per transactional id; opening a writer bumps it (fencing the older).
    pub epochs: BTreeMap<String, u32>,
    /// Transactional ids of writers opened, `None` for idempotent ones, in order.
    pub opened: Vec<Option<String>>,
    /// List-offsets answers (and the ranges of describe answers) leave out partition 0.
    pub drop_partition_zero: bool,
    /// (describe call number, topic): that call answers the topic's metadata, then the
    /// topic is deleted and recreated (as `recreate` does) before its offsets are read, so
    /// the answer's ranges are the new topic's under the old ID.
    pub recreate_before_offsets: Option<(u32, String)>,
    /// Every sleep, in milliseconds (back-offs and the protocols' own pauses).
    pub slept: Vec<u32>,
    /// `retrying` reports: (message, remaining ms, clock when reported).
    pub retried: Vec<(String, u64, u64)>,
    /// (operation, call number, topic): right before that call the topic is deleted and
    /// recreated under the same name (a new ID, every partition beginning at 0, the same
    /// ends), and the call answers `unknown-topic` (the broker no longer knows the old one).
    pub recreate: Option<(&'static str, u32, String)>,
    /// Idempotent appends lag like transactional ones (`stable_lag`).
    pub lag_idempotent: bool,
    /// (operation, n): the fake panics at call n + 1 of the operation (a busy loop).
    pub call_limit: Option<(&'static str, u32)>,
    /// Writers dropped so far, transactional ones by id, idempotent ones as `None`.
    pub dropped: Vec<Option<String>>,
    /// What `describe_cluster` answers (brokers as given, unsorted answers included).
    pub cluster: ClusterDescription,
    /// Polls that answer nothing before the logs are served (empty polls must not end replay).
    pub empty_polls: u32,
    /// Every poll answers nothing (a stalled broker).
    pub stalled: bool,
    /// Consumer answers scripted poll by poll instead of read from the logs.
    pub scripted: Option<ScriptedPolls>,
    /// Every consumer assignment, in order.
    pub assignments: Vec<PartitionOffsets>,
}

pub type Shared = Rc<RefCell<Cluster>>;

pub fn error(kind: ErrorKind) -> KafkaError {
    KafkaError {
        kind,
        code: 0,
        name: kind.name().to_uppercase(),
        message: format!("simulated {}", kind.name()),
    }
}

/// A topic with partitions `partitions`, every one from 0 to `end`, and the configuration the
/// data topic needs (no retention, compact and delete).
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
        replication_factor: 1,
    }
}

impl Cluster {
    /// An empty cluster of one broker (default replication factor 1) whose operation timeout
    /// is one second.
    pub fn new() -> Shared {
        let mut cluster = Cluster {
            timeout_ms: 1_000,
            ..Cluster::default()
        };
        cluster.brokers(1, "1");
        Rc::new(RefCell::new(cluster))
    }

    pub fn topic(&mut self, name: &str, partitions: &[u32]) {
        self.topics.insert(
            name.into(),
            safe_topic(&format!("id-{name}"), partitions, 0),
        );
    }

    /// A record of partition 0 of `topic` (the control topic's one partition).
    pub fn push(&mut self, topic: &str, offset: u64, key: Option<&[u8]>, value: Option<&[u8]>) {
        self.push_to(topic, 0, offset, key, value);
    }

    /// A record of `partition` of `topic`; the partition's end moves past it.
    pub fn push_to(
        &mut self,
        topic: &str,
        partition: u32,
        offset: u64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        let text = |b: Option<&[u8]>| b.and_then(|b| std::str::from_utf8(b).ok().map(String::from));
        let utf8 = [key, value]
            .iter()
            .all(|b| b.is_none_or(|b| std::str::from_utf8(b).is_ok()));
        self.logs
            .entry((topic.into(), partition))
            .or_default()
            .push(PolledRecord {
                partition,
                offset,
                has_key: key.is_some(),
                has_value: value.is_some(),
                utf8,
                key: text(key),
                value: text(value),
                // The fake clock stands for the broker's: a record is stamped when pushed.
                timestamp: i64::try_from(self.now).ok(),
            });
        if let Some(t) = self.topics.get_mut(topic) {
            let end = t.ends.get(partition).unwrap_or(0).max(offset + 1);
            t.ends.insert(partition, end);
        }
    }

    /// A record appended at the end of `partition` of `topic`; returns its offset.
    pub fn append_to(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> u64 {
        let offset = self
            .topics
            .get(topic)
            .and_then(|t| t.ends.get(partition))
            .unwrap_or(0);
        self.push_to(
            topic,
            partition,
            offset,
            Some(key.as_bytes()),
            Some(value.as_bytes()),
        );
        offset
    }

    pub fn fail_on(&mut self, operation: &'static str, call: u32, fault: Fault) {
        self.faults.push((operation, call, fault));
    }

    /// `brokers` brokers (IDs 1..) whose `default.replication.factor` is `default`.
    pub fn brokers(&mut self, brokers: u32, default: &str) {
        self.cluster = ClusterDescription {
            brokers: (1..=brokers).collect(),
            configs: vec![crate::kafka_types::ConfigEntry {
                name: "default.replication.factor".into(),
                value: Some(default.into()),
            }],
        };
    }

    pub fn data(&mut self) -> &mut FakeTopic {
        self.topics
            .get_mut(DATA)
            .expect("the fake data topic exists")
    }

    pub fn count(&self, operation: &str) -> u32 {
        self.calls.get(operation).copied().unwrap_or(0)
    }

    pub fn total_calls(&self) -> u32 {
        self.calls.values().sum()
    }

    /// Transactional writers opened: each one fenced the control topic's earlier writers.
    pub fn fences(&self) -> usize {
        self.opened.iter().filter(|id| id.is_some()).count()
    }

    /// Whether a `LostAnswer` fault is due at the current call of `operation`.
    fn answer_lost(&self, operation: &str) -> bool {
        let call = self.count(operation);
        self.faults
            .iter()
            .any(|(op, n, f)| *op == operation && *n == call && matches!(f, Fault::LostAnswer))
    }

    /// Counts a call and applies what is due at it: a recreation, a fault, a scripted error.
    fn enter(&mut self, operation: &'static str) -> KafkaResult<()> {
        self.trace.push(operation);
        let count = self.calls.entry(operation).or_insert(0);
        *count += 1;
        let call = *count;
        if let Some((op, limit)) = self.call_limit {
            assert!(
                op != operation || call <= limit,
                "{operation} was called more than {limit} times"
            );
        }
        if let Some((op, n, topic)) = self.recreate.clone()
            && op == operation
            && n == call
        {
            self.recreate = None;
            if let Some(t) = self.topics.get_mut(&topic) {
                t.topic_id = format!("{}-recreated", t.topic_id);
                t.beginnings = t.partitions.iter().map(|p| (*p, 0)).collect();
            }
            return Err(error(ErrorKind::UnknownTopic));
        }
        if let Some((op, error)) = &self.always
            && (*op == "*" || *op == operation)
        {
            return Err(error.clone());
        }
        let due: Vec<Fault> = self
            .faults
            .iter()
            .filter(|(op, n, _)| *op == operation && *n == call)
            .map(|(_, _, fault)| fault.clone())
            .collect();
        for fault in due {
            self.apply_fault(operation, call, fault)?;
        }
        match self
            .script
            .iter()
            .position(|(op, n, _)| *op == operation && *n == call)
        {
            Some(i) => Err(self.script.remove(i).2),
            None => Ok(()),
        }
    }

    fn apply_fault(&mut self, operation: &str, call: u32, fault: Fault) -> KafkaResult<()> {
        match fault {
            Fault::Fail => {
                return Err(KafkaError::new(
                    ErrorKind::Other,
                    format!("simulated failure of {operation} call {call}"),
                ));
            }
            Fault::Unauthorized => {
                return Err(KafkaError::new(
                    ErrorKind::Authorization,
                    "CLUSTER_AUTHORIZATION_FAILED: simulated",
                ));
            }
            Fault::RecreateTopic(id) => self.data().topic_id = id,
            Fault::RecreateEmptyTopic(id) => {
                let old = self.data().clone();
                let mut new = safe_topic(&id, &old.partitions, 0);
                new.configs = old.configs;
                self.topics.insert(DATA.into(), new);
            }
            Fault::DeleteTopic => {
                self.topics.remove(DATA);
            }
            Fault::SetPolicy(policy) => {
                self.data().configs.insert("cleanup.policy".into(), policy);
            }
            Fault::CreateControlTopic(name) => {
                let mut topic = safe_topic(&format!("id-{name}"), &[0], 0);
                topic
                    .configs
                    .insert("cleanup.policy".into(), "compact".into());
                self.topics.insert(name, topic);
            }
            Fault::ConcurrentCleanup(key, value) => {
                self.append_to(CONTROL, 0, &key, &value);
                let data = self.data();
                for (partition, beginning) in data.beginnings.clone().iter() {
                    data.beginnings.insert(partition, beginning + 10);
                }
            }
            Fault::LostAnswer => {}
        }
        Ok(())
    }

    /// The records of a partition's log at or past `position`.
    fn records_from(&self, topic: &str, partition: u32, position: u64) -> Vec<PolledRecord> {
        self.logs
            .get(&(topic.to_owned(), partition))
            .map(|log| {
                log.iter()
                    .filter(|r| r.offset >= position)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

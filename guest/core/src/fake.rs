//! An in-memory Kafka for unit tests of the protocols: topics with IDs, configs, beginnings and
//! ends, a control log, an event trace and failpoints keyed by call number.

use std::collections::BTreeMap;

use crate::control::ControlEntry;
use crate::error::KafkaError;
use crate::offsets::PartitionOffsets;
use crate::ops::{
    ClusterDescription, ConfigEntry, KafkaOps, KafkaResult, OffsetSpec, TopicDescription,
    TopicState,
};

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

/// What a failpoint does when its call comes.
#[derive(Debug, Clone)]
pub enum Fault {
    /// The call fails with a Kafka error.
    Fail,
    /// Before the call runs, the data topic is recreated with this ID.
    RecreateTopic(String),
    /// Before the call runs, the data topic's cleanup.policy becomes this value.
    SetPolicy(String),
    /// The call has its effect, then fails as if its answer were lost (a leader died after
    /// writing). Only `append_control` honours it.
    LostAnswer,
    /// Before the call runs, a concurrent apply creates this control topic (one partition,
    /// compact).
    CreateControlTopic(String),
    /// The call fails as a principal without the ACL would (host error `authorization`).
    Unauthorized,
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
    /// Every `pause`, in milliseconds.
    pub pauses: Vec<u32>,
    /// Delete-records calls that could delete nothing (permission probes).
    pub probes: Vec<String>,
    /// Every operation in call order.
    pub trace: Vec<&'static str>,
    /// Broker IDs the cluster lists, and the configuration the lowest one reports.
    pub brokers: Vec<u32>,
    pub broker_configs: BTreeMap<String, String>,
    /// Replication factor of every `create_topic`, in order.
    pub created_with: Vec<(String, u16)>,
}

pub const DATA: &str = "action-state";
pub const CONTROL: &str = "action-state-control";
/// The data topic's ID, in Kafka's form (the protocols compare it with plans and markers).
pub const TOPIC_ID: &str = "ygFlQI50RqmgPT_6YH-HZw";
/// Another Kafka topic ID: the data topic after it was deleted and created again.
pub const RECREATED_ID: &str = "_dCxXk8LR-qHr1Z2nQkB9w";

impl FakeKafka {
    /// A data topic with partitions 0 and 1, safe configuration, beginnings 0 and large ends.
    pub fn new() -> Self {
        let mut kafka = FakeKafka::default();
        kafka
            .topics
            .insert(DATA.into(), safe_topic(TOPIC_ID, &[0, 1], 1_000));
        kafka.cluster(1, "1");
        kafka
    }

    /// `brokers` brokers (IDs 1..) whose `default.replication.factor` is `default`.
    pub fn cluster(&mut self, brokers: u32, default: &str) {
        self.brokers = (1..=brokers).collect();
        self.broker_configs
            .insert("default.replication.factor".into(), default.into());
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
                    return Err(KafkaError::new(
                        operation,
                        format!("simulated failure of call {call}"),
                        true,
                    ));
                }
                Fault::RecreateTopic(id) => self.data().topic_id = id,
                Fault::SetPolicy(policy) => {
                    self.data().configs.insert("cleanup.policy".into(), policy);
                }
                Fault::LostAnswer => {}
                Fault::Unauthorized => {
                    let cause = crate::capabilities::HostError::new(
                        crate::capabilities::ErrorKind::Authorization,
                        "CLUSTER_AUTHORIZATION_FAILED: simulated",
                    );
                    return Err(KafkaError {
                        operation: operation.to_owned(),
                        message: format!("{cause} (authorization)"),
                        retriable: false,
                        cause: Some(cause),
                    });
                }
                Fault::CreateControlTopic(name) => {
                    let mut topic = safe_topic(&format!("id-{name}"), &[0], 0);
                    topic
                        .configs
                        .insert("cleanup.policy".into(), "compact".into());
                    self.topics.insert(name, topic);
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
        replication_factor: 1,
    }
}

fn missing(operation: &str, topic: &str) -> KafkaError {
    KafkaError::new(operation, format!("unknown topic {topic}"), false)
}

impl KafkaOps for FakeKafka {
    /// Describes, then reads configurations of the topics found: two calls, as two requests.
    fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        let described = self.describe_topics(topics)?;
        let existing: Vec<&str> = topics
            .iter()
            .zip(&described)
            .filter(|(_, d)| d.is_some())
            .map(|(t, _)| *t)
            .collect();
        let mut configs = if existing.is_empty() {
            Vec::new()
        } else {
            self.describe_configs(&existing, names)?
        }
        .into_iter();
        Ok(described
            .into_iter()
            .map(|d| {
                d.map(|description| TopicState {
                    replication_factor: self
                        .topics
                        .get(&description.topic)
                        .map_or(0, |t| t.replication_factor),
                    description,
                    configs: configs.next().unwrap_or_default(),
                    ranges: Vec::new(),
                })
            })
            .collect())
    }

    /// `inspect_topics`, then the ranges of the topics found: counted as one more
    /// `list_offsets` call, so failpoints on offset reads still reach the protocols.
    fn inspect_ranges(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>> {
        let mut states = self.inspect_topics(topics, names)?;
        self.enter("list_offsets")?;
        for state in states.iter_mut().flatten() {
            if let Some(t) = self.topics.get(&state.description.topic) {
                state.ranges = t
                    .partitions
                    .iter()
                    .filter_map(|p| Some((*p, t.beginnings.get(*p)?, t.ends.get(*p)?)))
                    .collect();
            }
        }
        Ok(states)
    }

    fn describe_cluster(&mut self, names: &[&str]) -> KafkaResult<ClusterDescription> {
        self.enter("describe_cluster")?;
        Ok(ClusterDescription {
            brokers: self.brokers.clone(),
            configs: names
                .iter()
                .map(|n| ConfigEntry {
                    name: (*n).to_owned(),
                    value: self.broker_configs.get(*n).cloned(),
                })
                .collect(),
        })
    }

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
        rf: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        self.enter("create_topic")?;
        if self.topics.contains_key(topic) {
            return Ok(false);
        }
        self.created_with.push((topic.to_owned(), rf));
        let partitions: Vec<u32> = (0..partitions).collect();
        let mut created = safe_topic(&format!("id-of-{topic}"), &partitions, 0);
        created.replication_factor = rf;
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
        expected: &TopicDescription,
        before: &PartitionOffsets,
    ) -> crate::error::Result<PartitionOffsets> {
        let topic = expected.topic.as_str();
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
        // Like the policy: the identity is confirmed right before the request.
        let found = self.topics.get(topic).map(|t| TopicDescription {
            topic: topic.to_owned(),
            topic_id: t.topic_id.clone(),
            partitions: t.partitions.clone(),
        });
        crate::topics::check_identity(
            topic,
            &expected.topic_id,
            &expected.partitions,
            found.as_ref(),
            "immediately before DeleteRecords",
        )?;
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

    /// Describes (as `inspect_topics` or `inspect_ranges`), lets `decide` choose, then deletes
    /// as `delete_records` does (which confirms the identity again).
    fn delete_described(
        &mut self,
        expected: &TopicDescription,
        names: &[&str],
        with_ranges: bool,
        decide: &mut dyn FnMut(Option<&TopicState>) -> crate::error::Result<PartitionOffsets>,
    ) -> crate::error::Result<PartitionOffsets> {
        let topic = expected.topic.as_str();
        let found = if with_ranges {
            self.inspect_ranges(&[topic], names)?
        } else {
            self.inspect_topics(&[topic], names)?
        };
        let before = decide(found.into_iter().next().flatten().as_ref())?;
        self.delete_records(expected, &before)
    }

    fn read_control_log(&mut self, topic: &str) -> crate::error::Result<Vec<ControlEntry>> {
        self.enter("read_control_log")?;
        Ok(self.control_log.get(topic).cloned().unwrap_or_default())
    }

    /// The whole log, like `read_control_log`: this fake's control logs are kept apart from
    /// its topics' offsets, so the range a describe answered does not bound them.
    fn read_control_range(
        &mut self,
        topic: &str,
        _beginning: u64,
        _end: u64,
    ) -> crate::error::Result<Vec<ControlEntry>> {
        self.read_control_log(topic)
    }

    fn pause(&mut self, ms: u32) {
        self.pauses.push(ms);
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
            return Err(crate::ops::AppendError::Failed(KafkaError::new(
                "append_control",
                "a COMMITTED record must be written by the fenced writer",
                false,
            )));
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
        let call = self.calls.get("append_control").copied().unwrap_or(0);
        if self.faults.iter().any(|(op, n, f)| {
            *op == "append_control" && *n == call && matches!(f, Fault::LostAnswer)
        }) {
            return Err(crate::ops::AppendError::Failed(KafkaError::new(
                "append_control",
                format!("simulated lost answer of call {call}"),
                true,
            )));
        }
        Ok(offset)
    }
}

/// A consumer over an in-memory log per partition; offsets may have gaps (compaction).
#[derive(Debug, Default)]
pub struct FakeSource {
    pub log: BTreeMap<u32, Vec<crate::capabilities::PolledRecord>>,
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
            .push(crate::capabilities::PolledRecord {
                partition,
                offset,
                has_key: true,
                has_value: value.is_some(),
                utf8: true,
                key: Some(key.into()),
                value: value.map(Into::into),
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

    fn poll(&mut self, max: u32, _timeout_ms: u32) -> KafkaResult<crate::replay::PolledBatch> {
        if self.stalled {
            return Ok(crate::replay::PolledBatch::default());
        }
        if self.empty_polls > 0 {
            self.empty_polls -= 1;
            return Ok(crate::replay::PolledBatch::default());
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
        Ok(crate::replay::PolledBatch::from_records(out))
    }
}

/// A fake cluster behind the plain 0.3 capabilities, for the tests of `policy`: a clock that
/// sleeping advances, scripted host errors by operation and call number, topics that appear in
/// metadata late, ends that lag behind a commit, and transactional ids with epochs.
pub mod caps {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;

    use super::FakeTopic;
    use crate::capabilities::{
        CapResult, Capabilities, Consumer, ErrorKind, HostError, PartitionRange, PolledBatch,
        PolledRecord, TopicMetadata, Writer,
    };
    use crate::offsets::PartitionOffsets;
    use crate::ops::{ClusterDescription, ConfigEntry, OffsetSpec};

    #[derive(Debug, Default)]
    pub struct Cluster {
        pub now: u64,
        pub timeout_ms: u32,
        pub topics: BTreeMap<String, FakeTopic>,
        /// Records per (topic, partition); offsets may have gaps (transaction markers).
        pub logs: BTreeMap<(String, u32), Vec<PolledRecord>>,
        /// (operation, call number from 1) → the error that call returns.
        pub script: Vec<(&'static str, u32, HostError)>,
        /// Every call from `from` on fails with this error (a dead cluster, a wrong password).
        pub always: Option<(&'static str, HostError)>,
        pub calls: BTreeMap<&'static str, u32>,
        /// Describe calls that still answer "missing" for a topic (metadata propagation).
        pub hidden: BTreeMap<String, u32>,
        /// Topic → how many more describes answer it without its configuration values (a
        /// broker that knows the topic but has not applied its configuration yet).
        pub configless: BTreeMap<String, u32>,
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
    }

    pub type Shared = Rc<RefCell<Cluster>>;

    pub fn error(kind: ErrorKind) -> HostError {
        HostError {
            kind,
            code: 0,
            name: kind.name().to_uppercase(),
            message: format!("simulated {}", kind.name()),
        }
    }

    impl Cluster {
        pub fn new() -> Shared {
            Rc::new(RefCell::new(Cluster {
                timeout_ms: 1_000,
                ..Cluster::default()
            }))
        }

        pub fn topic(&mut self, name: &str, partitions: &[u32]) {
            self.topics.insert(
                name.into(),
                super::safe_topic(&format!("id-{name}"), partitions, 0),
            );
        }

        pub fn push(&mut self, topic: &str, offset: u64, key: Option<&[u8]>, value: Option<&[u8]>) {
            let text =
                |b: Option<&[u8]>| b.and_then(|b| std::str::from_utf8(b).ok().map(String::from));
            let utf8 = [key, value]
                .iter()
                .all(|b| b.is_none_or(|b| std::str::from_utf8(b).is_ok()));
            self.logs
                .entry((topic.into(), 0))
                .or_default()
                .push(PolledRecord {
                    partition: 0,
                    offset,
                    has_key: key.is_some(),
                    has_value: value.is_some(),
                    utf8,
                    key: text(key),
                    value: text(value),
                });
            if let Some(t) = self.topics.get_mut(topic) {
                let end = t.ends.get(0).unwrap_or(0).max(offset + 1);
                t.ends.insert(0, end);
            }
        }

        fn enter(&mut self, operation: &'static str) -> CapResult<()> {
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
            match self
                .script
                .iter()
                .position(|(op, n, _)| *op == operation && *n == call)
            {
                Some(i) => Err(self.script.remove(i).2),
                None => Ok(()),
            }
        }

        pub fn count(&self, operation: &str) -> u32 {
            self.calls.get(operation).copied().unwrap_or(0)
        }
    }

    pub struct FakeCaps(pub Shared);

    pub struct FakeWriter {
        cluster: Shared,
        id: Option<String>,
        epoch: u32,
    }

    pub struct FakeConsumer {
        cluster: Shared,
        topic: String,
        positions: PartitionOffsets,
    }

    impl Writer for FakeWriter {
        fn append(
            &mut self,
            topic: &str,
            partition: u32,
            key: &str,
            value: &str,
        ) -> CapResult<u64> {
            let mut c = self.cluster.borrow_mut();
            c.enter("append")?;
            if let Some(id) = &self.id
                && c.epochs.get(id) != Some(&self.epoch)
            {
                return Err(error(ErrorKind::Fenced));
            }
            let before = c
                .topics
                .get(topic)
                .and_then(|t| t.ends.get(partition))
                .unwrap_or(0);
            c.push(topic, before, Some(key.as_bytes()), Some(value.as_bytes()));
            if (self.id.is_some() || c.lag_idempotent) && c.stable_lag > 0 {
                c.lagging_end = Some(before);
            }
            Ok(before)
        }
    }

    impl Drop for FakeWriter {
        fn drop(&mut self) {
            if let Ok(mut c) = self.cluster.try_borrow_mut() {
                c.dropped.push(self.id.clone());
            }
        }
    }

    impl Consumer for FakeConsumer {
        fn assign(&mut self, start: &PartitionOffsets) -> CapResult<()> {
            self.cluster.borrow_mut().enter("assign")?;
            self.positions = start.clone();
            Ok(())
        }

        fn position(&mut self) -> CapResult<PartitionOffsets> {
            Ok(self.positions.clone())
        }

        fn poll(&mut self, max: u32, _timeout: u32, with_data: bool) -> CapResult<PolledBatch> {
            let mut c = self.cluster.borrow_mut();
            c.enter("poll")?;
            let mut out = Vec::new();
            for (partition, position) in self.positions.clone().iter() {
                let log = c
                    .logs
                    .get(&(self.topic.clone(), partition))
                    .cloned()
                    .unwrap_or_default();
                for record in log.into_iter().filter(|r| r.offset >= position) {
                    if out.len() >= max as usize {
                        break;
                    }
                    self.positions.insert(partition, record.offset + 1);
                    let mut record = record;
                    if !with_data {
                        record.key = None;
                        record.value = None;
                    }
                    out.push(record);
                }
                // Past the delivered records lie only markers: the position reaches the end.
                if out.len() < max as usize
                    && let Some(end) = c
                        .topics
                        .get(&self.topic)
                        .and_then(|t| t.ends.get(partition))
                {
                    self.positions.insert(
                        partition,
                        end.max(self.positions.get(partition).unwrap_or(0)),
                    );
                }
            }
            Ok(PolledBatch::from_records(out))
        }
    }

    impl Capabilities for FakeCaps {
        type Writer = FakeWriter;
        type Consumer = FakeConsumer;

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
        ) -> CapResult<Vec<Option<TopicMetadata>>> {
            let mut c = self.0.borrow_mut();
            c.enter("describe")?;
            let call = c.count("describe");
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

        fn describe_cluster(&mut self, names: &[&str]) -> CapResult<ClusterDescription> {
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
            _replication_factor: u16,
            configs: &[ConfigEntry],
        ) -> CapResult<bool> {
            let mut c = self.0.borrow_mut();
            c.enter("create_topic")?;
            if c.topics.contains_key(topic) {
                return Ok(false);
            }
            let all: Vec<u32> = (0..partitions).collect();
            c.topic(topic, &all);
            if let Some(t) = c.topics.get_mut(topic) {
                for entry in configs {
                    if let Some(value) = &entry.value {
                        t.configs.insert(entry.name.clone(), value.clone());
                    }
                }
            }
            Ok(true)
        }

        fn list_offsets(
            &mut self,
            topic: &str,
            partitions: &[u32],
            spec: OffsetSpec,
        ) -> CapResult<Vec<(u32, u64)>> {
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
        ) -> CapResult<Vec<(u32, u64)>> {
            let mut c = self.0.borrow_mut();
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

        fn open_writer(&mut self, transactional_id: Option<&str>) -> CapResult<FakeWriter> {
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

        fn open_consumer(&mut self, topic: &str) -> CapResult<FakeConsumer> {
            self.0.borrow_mut().enter("open_consumer")?;
            Ok(FakeConsumer {
                cluster: self.0.clone(),
                topic: topic.to_owned(),
                positions: PartitionOffsets::new(),
            })
        }
    }
}

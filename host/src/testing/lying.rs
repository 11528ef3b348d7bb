//! Lying hosts: a decorator of the capabilities that misbehaves in one chosen way, so the tests
//! can prove that the conformance suite catches each lie and that the component's rules hold
//! against a host that fails.

use std::sync::{Arc, Mutex, PoisonError};

use action_state_format::offsets::PartitionOffsets;
use action_state_format::topic_id::ZERO_TOPIC_ID;
use action_state_kafka::capabilities::{
    self as caps, Capabilities, ErrorKind, KafkaError, KafkaResult, PolledBatch, TopicMetadata,
};
use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use rdkafka::types::RDKafkaErrorCode;

use crate::kafka::capabilities::HeldRecords;
use crate::kafka::consumer::HeldRecord;
use crate::kafka::errors::from_code;

/// Ways a host capability can misbehave; the conformance suite must fail on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lie {
    /// `list-offsets` LATEST answers one past the end.
    EndPlusOne,
    /// `writer.open` ignores the transactional id, so nothing is fenced.
    NoFencing,
    /// `describe` of a missing topic fails instead of answering `none`.
    MissingIsError,
    /// Every Kafka error is reported as `other`.
    EverythingIsOther,
    /// `poll` without data still sends keys and values.
    DataAlways,
    /// `sleep-ms` returns at once.
    NoSleep,
    /// `describe` answers replication factor 0 and `describe-cluster` answers no value for any
    /// broker configuration: the facts the control topic's replication is decided on.
    ReplicationUnknown,
    /// `consumer.open` fails with a transport error (a host that cannot reach the cluster
    /// when a restore needs its consumer): the component's failure rules must still hold.
    ConsumerOpenFails,
    /// `delete-records` answered `unknown-topic` is sent again every 200 ms until the operation
    /// timeout, as kafka-clients' `Admin.deleteRecords` does (it looks the leader up again):
    /// a host with client-side retries, which a recreated topic's records do not survive.
    ResendsDeletes,
    /// `describe` answers the all-zero topic ID: a host whose client asks for metadata in a
    /// version without topic IDs, or any host on a broker before Kafka 2.8 (or with
    /// inter.broker.protocol.version below 2.8), which the CLI tests cannot start.
    NoTopicIds,
}

impl Lie {
    /// The lie `ASC_LIE` names for a CLI run by the tests (`no-topic-ids`); `None` for any
    /// other text.
    fn named(name: &str) -> Option<Lie> {
        match name {
            "no-topic-ids" => Some(Lie::NoTopicIds),
            _ => None,
        }
    }
}

/// How often `ResendsDeletes` sends a deletion again.
const RESEND_INTERVAL_MS: u32 = 200;

/// The lie in force, shared with the writers and consumers opened through the decorator: a
/// change applies to them too, from their next call.
#[derive(Clone, Default)]
struct Current(Arc<Mutex<Option<Lie>>>);

impl Current {
    fn is(&self, lie: Lie) -> bool {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) == Some(lie)
    }

    /// The error as reported (every kind `other` for `EverythingIsOther`).
    fn error(&self, mut error: KafkaError) -> KafkaError {
        if self.is(Lie::EverythingIsOther) {
            error.kind = ErrorKind::Other;
        }
        error
    }

    fn answer<T>(&self, result: KafkaResult<T>) -> KafkaResult<T> {
        result.map_err(|e| self.error(e))
    }
}

/// `inner`, misbehaving as the lie in force says (none: exactly `inner`).
pub struct Lying<C> {
    inner: C,
    lie: Current,
}

impl<C> Lying<C> {
    pub fn new(inner: C) -> Self {
        Lying {
            inner,
            lie: Current::default(),
        }
    }

    /// `inner`, misbehaving from the start as the environment's `ASC_LIE` says (unset: behave):
    /// how a test makes the CLI it runs lie, as `ASC_FAILPOINT` arms a failpoint.
    pub fn from_env(inner: C) -> Self {
        let mut lying = Lying::new(inner);
        let lie = std::env::var("ASC_LIE").ok();
        lying.misbehave(lie.as_deref().and_then(Lie::named));
        lying
    }

    /// Misbehaves from now on as `lie` says (`None`: behave).
    pub fn misbehave(&mut self, lie: Option<Lie>) {
        *self.lie.0.lock().unwrap_or_else(PoisonError::into_inner) = lie;
    }
}

pub struct LyingWriter<W> {
    inner: W,
    lie: Current,
}

impl<W: caps::Writer> caps::Writer for LyingWriter<W> {
    fn append(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> KafkaResult<u64> {
        self.lie
            .answer(self.inner.append(topic, partition, key, value))
    }
}

pub struct LyingConsumer<K> {
    inner: K,
    lie: Current,
}

impl<K: caps::Consumer> caps::Consumer for LyingConsumer<K> {
    fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        self.lie.answer(self.inner.assign(start))
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        self.lie.answer(self.inner.position())
    }

    fn poll(&mut self, max: u32, timeout_ms: u32, with_data: bool) -> KafkaResult<PolledBatch> {
        let with_data = with_data || self.lie.is(Lie::DataAlways);
        self.lie.answer(self.inner.poll(max, timeout_ms, with_data))
    }
}

impl<K: HeldRecords> HeldRecords for LyingConsumer<K> {
    fn held(&mut self, index: u32) -> Option<&mut HeldRecord> {
        self.inner.held(index)
    }
}

impl<C: Capabilities> Capabilities for Lying<C> {
    type Writer = LyingWriter<C::Writer>;
    type Consumer = LyingConsumer<C::Consumer>;

    fn now_ms(&mut self) -> u64 {
        self.inner.now_ms()
    }

    fn sleep_ms(&mut self, ms: u32) {
        if !self.lie.is(Lie::NoSleep) {
            self.inner.sleep_ms(ms);
        }
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        self.inner.operation_timeout_ms()
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        self.inner.retrying(message, remaining_ms);
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let mut answer = self.inner.describe(topics, config_names, with_offsets);
        if self.lie.is(Lie::MissingIsError)
            && let Ok(all) = &answer
            && all.iter().any(Option::is_none)
        {
            return Err(from_code(
                RDKafkaErrorCode::UnknownTopicOrPartition,
                "lying host",
            ));
        }
        if self.lie.is(Lie::ReplicationUnknown)
            && let Ok(all) = &mut answer
        {
            all.iter_mut()
                .flatten()
                .for_each(|t| t.replication_factor = 0);
        }
        if self.lie.is(Lie::NoTopicIds)
            && let Ok(all) = &mut answer
        {
            all.iter_mut()
                .flatten()
                .for_each(|t| t.topic_id = ZERO_TOPIC_ID.to_owned());
        }
        self.lie.answer(answer)
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        let mut answer = self.inner.describe_cluster(config_names);
        if self.lie.is(Lie::ReplicationUnknown)
            && let Ok(cluster) = &mut answer
        {
            cluster.configs.iter_mut().for_each(|c| c.value = None);
        }
        self.lie.answer(answer)
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let answer = self
            .inner
            .create_topic(topic, partitions, replication_factor, configs);
        self.lie.answer(answer)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let past_end = u64::from(self.lie.is(Lie::EndPlusOne) && spec == OffsetSpec::Latest);
        let answer = self.inner.list_offsets(topic, partitions, spec).map(|all| {
            all.into_iter()
                .map(|(partition, offset)| (partition, offset + past_end))
                .collect()
        });
        self.lie.answer(answer)
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let mut answer = self.inner.delete_records(topic, before);
        if self.lie.is(Lie::ResendsDeletes) {
            let deadline = self.inner.now_ms() + u64::from(self.inner.operation_timeout_ms());
            while matches!(&answer, Err(e) if e.kind == ErrorKind::UnknownTopic)
                && self.inner.now_ms() < deadline
            {
                self.inner.sleep_ms(RESEND_INTERVAL_MS);
                answer = self.inner.delete_records(topic, before);
            }
        }
        self.lie.answer(answer)
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Self::Writer> {
        let id = transactional_id.filter(|_| !self.lie.is(Lie::NoFencing));
        let writer = self.lie.answer(self.inner.open_writer(id))?;
        Ok(LyingWriter {
            inner: writer,
            lie: self.lie.clone(),
        })
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Self::Consumer> {
        if self.lie.is(Lie::ConsumerOpenFails) {
            return Err(self.lie.error(KafkaError {
                kind: ErrorKind::Transport,
                code: -195,
                name: "_TRANSPORT".into(),
                message: "the consumer could not be opened (test host)".into(),
            }));
        }
        let consumer = self.lie.answer(self.inner.open_consumer(topic))?;
        Ok(LyingConsumer {
            inner: consumer,
            lie: self.lie.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use action_state_kafka::capabilities::Writer as _;

    use super::*;

    /// Answers every call the same way: `fail` as the error, or empty answers.
    struct Stub {
        fail: Option<KafkaError>,
        opened_with: Vec<Option<String>>,
    }

    struct StubWriter(Option<KafkaError>);

    impl caps::Writer for StubWriter {
        fn append(&mut self, _: &str, _: u32, _: &str, _: &str) -> KafkaResult<u64> {
            self.0.clone().map_or(Ok(41), Err)
        }
    }

    impl caps::Consumer for StubWriter {
        fn assign(&mut self, _: &PartitionOffsets) -> KafkaResult<()> {
            Ok(())
        }
        fn position(&mut self) -> KafkaResult<PartitionOffsets> {
            Ok(PartitionOffsets::new())
        }
        fn poll(&mut self, _: u32, _: u32, _: bool) -> KafkaResult<PolledBatch> {
            Ok(PolledBatch::default())
        }
    }

    impl Stub {
        fn answer<T>(&self, value: T) -> KafkaResult<T> {
            self.fail.clone().map_or(Ok(value), Err)
        }
    }

    impl Capabilities for Stub {
        type Writer = StubWriter;
        type Consumer = StubWriter;
        fn now_ms(&mut self) -> u64 {
            0
        }
        fn sleep_ms(&mut self, _: u32) {}
        fn operation_timeout_ms(&mut self) -> u32 {
            1
        }
        fn describe(
            &mut self,
            topics: &[&str],
            _: &[&str],
            _: bool,
        ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
            self.answer(topics.iter().map(|_| None).collect())
        }
        fn describe_cluster(&mut self, _: &[&str]) -> KafkaResult<ClusterDescription> {
            self.answer(ClusterDescription {
                brokers: vec![1],
                configs: Vec::new(),
            })
        }
        fn create_topic(
            &mut self,
            _: &str,
            _: u32,
            _: u16,
            _: &[ConfigEntry],
        ) -> KafkaResult<bool> {
            self.answer(true)
        }
        fn list_offsets(
            &mut self,
            _: &str,
            partitions: &[u32],
            _: OffsetSpec,
        ) -> KafkaResult<Vec<(u32, u64)>> {
            self.answer(partitions.iter().map(|p| (*p, 10)).collect())
        }
        fn delete_records(
            &mut self,
            _: &str,
            before: &PartitionOffsets,
        ) -> KafkaResult<Vec<(u32, u64)>> {
            self.answer(before.iter().collect())
        }
        fn open_writer(&mut self, id: Option<&str>) -> KafkaResult<StubWriter> {
            self.opened_with.push(id.map(Into::into));
            Ok(StubWriter(self.fail.clone()))
        }
        fn open_consumer(&mut self, _: &str) -> KafkaResult<StubWriter> {
            Ok(StubWriter(self.fail.clone()))
        }
    }

    fn stub(fail: Option<KafkaError>) -> Lying<Stub> {
        Lying::new(Stub {
            fail,
            opened_with: Vec::new(),
        })
    }

    #[test]
    fn without_a_lie_every_answer_is_the_inner_one() {
        let mut host = stub(None);
        assert_eq!(host.describe(&["t"], &[], false), Ok(vec![None]));
        let latest = host.list_offsets("t", &[0, 1], OffsetSpec::Latest);
        assert_eq!(latest, Ok(vec![(0, 10), (1, 10)]));
        assert!(host.open_writer(Some("tx")).is_ok());
        assert_eq!(host.inner.opened_with, [Some("tx".to_owned())]);
        let timeout = KafkaError::new(ErrorKind::Timeout, "slow");
        let mut failing = stub(Some(timeout.clone()));
        assert_eq!(failing.describe_cluster(&[]), Err(timeout));
    }

    #[test]
    fn each_lie_changes_only_its_own_answer() {
        let mut host = stub(None);
        host.misbehave(Some(Lie::EndPlusOne));
        let latest = host.list_offsets("t", &[0], OffsetSpec::Latest);
        let earliest = host.list_offsets("t", &[0], OffsetSpec::Earliest);
        assert_eq!((latest, earliest), (Ok(vec![(0, 11)]), Ok(vec![(0, 10)])));
        host.misbehave(Some(Lie::MissingIsError));
        let missing = host.describe(&["t"], &[], false).map_err(|e| e.kind);
        assert_eq!(missing, Err(ErrorKind::UnknownTopic));
        host.misbehave(Some(Lie::NoFencing));
        assert!(host.open_writer(Some("tx")).is_ok());
        assert_eq!(host.inner.opened_with, [None]);
    }

    #[test]
    fn a_lie_switched_on_later_reaches_a_writer_opened_before() {
        let mut host = stub(Some(KafkaError::new(ErrorKind::Fenced, "fenced")));
        let Ok(mut writer) = host.open_writer(None) else {
            unreachable!("the stub opens every writer")
        };
        let kind = |answer: KafkaResult<u64>| answer.map_err(|e| e.kind);
        assert_eq!(
            kind(writer.append("t", 0, "k", "v")),
            Err(ErrorKind::Fenced)
        );
        host.misbehave(Some(Lie::EverythingIsOther));
        assert_eq!(kind(writer.append("t", 0, "k", "v")), Err(ErrorKind::Other));
    }
}

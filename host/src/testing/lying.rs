//! Lying hosts: a decorator of the capabilities that misbehaves in one chosen way, so the tests
//! can prove that the conformance suite catches each lie and that the component's rules hold
//! against a host that fails.

use action_state_format::offsets::PartitionOffsets;
use action_state_format::topic_id::ZERO_TOPIC_ID;
use action_state_kafka::capabilities::{
    Answer, AnswerOf, Call, CallOn, Capabilities, ErrorKind, Kafka, KafkaError, KafkaResult,
};
use action_state_kafka::kafka_types::OffsetSpec;
use rdkafka::types::RDKafkaErrorCode;

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
    /// Every Kafka error is reported as `other`, without the code that says what happened (a
    /// protocol code the host reports as it came is the component's to classify: no lie).
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

/// `inner`, misbehaving as the lie in force says (none: exactly `inner`). A layer: it changes
/// one call or answer per lie and passes every call on, writers' and consumers' included, so a
/// lie switched on later reaches a writer opened before.
pub struct Lying<C> {
    inner: C,
    lie: Option<Lie>,
}

impl<C> Lying<C> {
    pub fn new(inner: C) -> Self {
        Lying { inner, lie: None }
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
        self.lie = lie;
    }

    fn is(&self, lie: Lie) -> bool {
        self.lie == Some(lie)
    }
}

impl<C: Capabilities> Lying<C> {
    /// `delete-records` sent again every `RESEND_INTERVAL_MS` while it answers `unknown-topic`,
    /// until the operation timeout.
    fn resent_deletes(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Answer<C::Writer, C::Consumer>> {
        let deadline = self.inner.now_ms() + u64::from(self.inner.operation_timeout_ms());
        let mut answer = self.inner.call(Call::DeleteRecords { topic, before });
        while matches!(&answer, Err(e) if e.kind == ErrorKind::UnknownTopic)
            && self.inner.now_ms() < deadline
        {
            self.inner.sleep_ms(RESEND_INTERVAL_MS);
            answer = self.inner.call(Call::DeleteRecords { topic, before });
        }
        answer
    }

    /// The answer as the lie in force changes it.
    fn told(
        &self,
        answer: Answer<C::Writer, C::Consumer>,
        past_end: bool,
    ) -> KafkaResult<Answer<C::Writer, C::Consumer>> {
        Ok(match answer {
            Answer::Topics(all)
                if self.is(Lie::MissingIsError) && all.iter().any(Option::is_none) =>
            {
                return Err(from_code(
                    RDKafkaErrorCode::UnknownTopicOrPartition,
                    "lying host",
                ));
            }
            Answer::Topics(mut all) => {
                for topic in all.iter_mut().flatten() {
                    if self.is(Lie::ReplicationUnknown) {
                        topic.replication_factor = 0;
                    }
                    if self.is(Lie::NoTopicIds) {
                        topic.topic_id = ZERO_TOPIC_ID.to_owned();
                    }
                }
                Answer::Topics(all)
            }
            Answer::Cluster(mut cluster) if self.is(Lie::ReplicationUnknown) => {
                cluster.configs.iter_mut().for_each(|c| c.value = None);
                Answer::Cluster(cluster)
            }
            Answer::Offsets(all) if past_end => {
                Answer::Offsets(all.into_iter().map(|(p, offset)| (p, offset + 1)).collect())
            }
            answer => answer,
        })
    }
}

impl<C: Capabilities> Capabilities for Lying<C> {
    type Writer = C::Writer;
    type Consumer = C::Consumer;

    fn call(&mut self, call: CallOn<'_, C>) -> AnswerOf<C> {
        let past_end = self.is(Lie::EndPlusOne)
            && matches!(
                call,
                Call::ListOffsets {
                    spec: OffsetSpec::Latest,
                    ..
                }
            );
        let answer = match call {
            Call::Sleep { .. } if self.is(Lie::NoSleep) => Ok(Answer::Done),
            Call::OpenWriter { transactional_id } => self.inner.call(Call::OpenWriter {
                transactional_id: transactional_id.filter(|_| !self.is(Lie::NoFencing)),
            }),
            Call::OpenConsumer { .. } if self.is(Lie::ConsumerOpenFails) => Err(KafkaError {
                kind: ErrorKind::Transport,
                code: -195,
                name: "_TRANSPORT".into(),
                message: "the consumer could not be opened (test host)".into(),
            }),
            Call::Poll {
                consumer,
                max_records,
                timeout_ms,
                with_data,
            } => self.inner.call(Call::Poll {
                consumer,
                max_records,
                timeout_ms,
                with_data: with_data || self.is(Lie::DataAlways),
            }),
            Call::DeleteRecords { topic, before } if self.is(Lie::ResendsDeletes) => {
                self.resent_deletes(topic, before)
            }
            call => self.inner.call(call),
        };
        let answer = answer.and_then(|answer| self.told(answer, past_end));
        // Every Kafka error reported as `other`, its code lost.
        answer.map_err(|mut error| {
            if self.is(Lie::EverythingIsOther) {
                error.kind = ErrorKind::Other;
                error.code = 0;
                error.name = String::new();
            }
            error
        })
    }
}

#[cfg(test)]
mod tests {
    use action_state_kafka::capabilities::{PolledBatch, TopicMetadata};
    use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry};
    use action_state_kafka::leaf::Operations;

    use super::*;

    /// Answers every call the same way: `fail` as the error, or empty answers.
    struct Stub {
        fail: Option<KafkaError>,
        opened_with: Vec<Option<String>>,
    }

    struct StubWriter;

    impl Stub {
        fn answer<T>(&self, value: T) -> KafkaResult<T> {
            self.fail.clone().map_or(Ok(value), Err)
        }
    }

    impl Operations for Stub {
        type Writer = StubWriter;
        type Consumer = StubWriter;
        fn append(
            &mut self,
            _: &mut StubWriter,
            _: &str,
            _: u32,
            _: &str,
            _: &str,
        ) -> KafkaResult<u64> {
            self.answer(41)
        }
        fn assign(&mut self, _: &mut StubWriter, _: &PartitionOffsets) -> KafkaResult<()> {
            Ok(())
        }
        fn position(&mut self, _: &mut StubWriter) -> KafkaResult<PartitionOffsets> {
            Ok(PartitionOffsets::new())
        }
        fn poll(
            &mut self,
            _: &mut StubWriter,
            _: u32,
            _: u32,
            _: bool,
        ) -> KafkaResult<PolledBatch> {
            Ok(PolledBatch::default())
        }
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
            Ok(StubWriter)
        }
        fn open_consumer(&mut self, _: &str) -> KafkaResult<StubWriter> {
            Ok(StubWriter)
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
            kind(host.append(&mut writer, "t", 0, "k", "v")),
            Err(ErrorKind::Fenced)
        );
        host.misbehave(Some(Lie::EverythingIsOther));
        assert_eq!(
            kind(host.append(&mut writer, "t", 0, "k", "v")),
            Err(ErrorKind::Other)
        );
    }
}

//! The host's Kafka clients as the core's `Capabilities`: the one implementation of this host's
//! Kafka calls. The component's imports reach it through `cleanup` (WIT types converted there);
//! the core's policies run on it natively too (tests, the benchmark). One plain operation per
//! call: request bounds, metadata refresh and error mapping live in the clients, every retry,
//! wait and meaning in the core.

use std::borrow::BorrowMut;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use action_state_format::offsets::PartitionOffsets;
use action_state_kafka::capabilities::{KafkaResult, PartitionRange, PolledBatch, TopicMetadata};
use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_kafka::leaf::Operations;

use super::consumer::{Consumer, HeldRecord, columns};
use super::progress::{self, SharedWaiting};
use super::writer::Writer;
use super::{KafkaClients, KafkaResult as HostResult, admin::Admin, ffi};

pub use super::progress::Waiting;

/// `Capabilities` over one host's Kafka clients, owned (`KafkaClients`, a component's store) or
/// borrowed (`&mut KafkaClients`, a native run that keeps the clients).
pub struct KafkaCapabilities<K = KafkaClients> {
    kafka: K,
    started: Instant,
    waiting: SharedWaiting,
}

impl<K: BorrowMut<KafkaClients>> KafkaCapabilities<K> {
    pub fn new(kafka: K) -> Self {
        KafkaCapabilities {
            kafka,
            started: Instant::now(),
            waiting: Rc::new(RefCell::new(Box::new(|_, _| {}))),
        }
    }

    /// Reports every second of a request still waiting for its answer to `waiting`: any admin
    /// request, opening a writer or consumer, an append (a refused connection or a dead leader
    /// makes a request wait for its whole timeout), and a DeleteRecords (a wide one waits for
    /// every replica). Without a report that is silence. The reports come on this thread.
    pub fn reporting_waits(mut self, waiting: Waiting) -> Self {
        progress::uninstall(&self.waiting);
        self.waiting = Rc::new(RefCell::new(waiting));
        progress::install(&self.waiting);
        self
    }

    pub fn kafka(&mut self) -> &mut KafkaClients {
        self.kafka.borrow_mut()
    }

    /// One admin request, reported while it waits (`progress`), naming the reason the client
    /// last gave for a broker it cannot reach.
    fn admin_request<T: Send>(
        &mut self,
        what: &str,
        call: impl FnOnce(&Admin) -> HostResult<T> + Send,
    ) -> HostResult<T> {
        let admin = self.kafka().admin()?;
        let client = admin.client.inner().native_ptr() as usize;
        progress::watched(what, || unreachable_now(client), || call(admin))
    }
}

impl<K> Drop for KafkaCapabilities<K> {
    fn drop(&mut self) {
        progress::uninstall(&self.waiting);
    }
}

/// What the client at `client` last said about a broker it could not reach, in librdkafka's
/// words ("Connect to ipv4#127.0.0.1:1 failed: Connection refused").
fn unreachable_now(client: usize) -> Option<String> {
    ffi::unreachable_cause(client as *mut _)
        .map(|e| format!("no broker reachable yet: {}", e.message))
}

/// A consumer that keeps the keys and values of its latest poll in the host: the guest names
/// records by index and the runtime takes them from here (`recovery.next-batch`).
pub trait HeldRecords {
    /// Record `index` of the latest poll, or `None` when that poll returned no such record.
    fn held(&mut self, index: u32) -> Option<&mut HeldRecord>;
}

impl HeldRecords for Consumer {
    fn held(&mut self, index: u32) -> Option<&mut HeldRecord> {
        self.held.get_mut(usize::try_from(index).ok()?)
    }
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

fn config_entries(pairs: Vec<(String, Option<String>)>) -> Vec<ConfigEntry> {
    pairs
        .into_iter()
        .map(|(name, value)| ConfigEntry { name, value })
        .collect()
}

impl<K: BorrowMut<KafkaClients>> Operations for KafkaCapabilities<K> {
    type Writer = Writer;
    type Consumer = Consumer;

    fn append(
        &mut self,
        writer: &mut Writer,
        topic: &str,
        partition: u32,
        key: &str,
        value: &str,
    ) -> KafkaResult<u64> {
        writer.append(topic, partition, key, value)
    }

    fn assign(&mut self, consumer: &mut Consumer, start: &PartitionOffsets) -> KafkaResult<()> {
        consumer.assign(&start.iter().collect::<Vec<_>>())
    }

    fn position(&mut self, consumer: &mut Consumer) -> KafkaResult<PartitionOffsets> {
        Ok(consumer.position()?.into_iter().collect())
    }

    fn poll(
        &mut self,
        consumer: &mut Consumer,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let held = consumer.poll(max_records, timeout)?;
        PolledBatch::from_columns(columns(held, with_data))
    }

    fn now_ms(&mut self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn sleep_ms(&mut self, ms: u32) {
        std::thread::sleep(Duration::from_millis(u64::from(ms)));
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        let millis = self.kafka().settings().timeout.as_millis();
        u32::try_from(millis).unwrap_or(u32::MAX).max(1)
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let (topics, names) = (owned(topics), owned(config_names));
        let what = format!("describe of {}", topics.join(", "));
        let answer =
            self.admin_request(&what, |admin| admin.describe(&topics, &names, with_offsets))?;
        Ok(answer
            .into_iter()
            .map(|t| {
                t.map(|t| TopicMetadata {
                    topic: t.topic,
                    topic_id: t.topic_id,
                    partitions: t.partitions,
                    configs: config_entries(t.configs),
                    offsets: t
                        .offsets
                        .into_iter()
                        .map(|(partition, beginning, end)| PartitionRange {
                            partition,
                            beginning,
                            end,
                        })
                        .collect(),
                    replication_factor: t.replication_factor,
                })
            })
            .collect())
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        let names = owned(config_names);
        let cluster = self.admin_request("describe of the cluster", |admin| {
            admin.describe_cluster(&names)
        })?;
        Ok(ClusterDescription {
            brokers: cluster.brokers,
            configs: config_entries(cluster.configs),
        })
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        // An entry without a value sets nothing: the broker's default applies.
        let configs: Vec<(String, String)> = configs
            .iter()
            .filter_map(|c| c.value.clone().map(|v| (c.name.clone(), v)))
            .collect();
        self.admin_request(&format!("creation of topic {topic}"), |admin| {
            admin.create_topic(topic, partitions, replication_factor, &configs)
        })
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let spec = match spec {
            OffsetSpec::Earliest => ffi::Spec::Earliest,
            OffsetSpec::Latest => ffi::Spec::Latest,
        };
        self.admin_request(&format!("offsets of {topic}"), |admin| {
            admin.list_offsets(topic, partitions, spec)
        })
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let before: Vec<(u32, u64)> = before.iter().collect();
        let what = format!("DeleteRecords on {} partitions of {topic}", before.len());
        let KafkaCapabilities { kafka, waiting, .. } = self;
        let mut waited = |elapsed: Duration| {
            if let Ok(mut waiting) = waiting.try_borrow_mut() {
                waiting(&what, elapsed);
            }
        };
        kafka
            .borrow_mut()
            .admin()?
            .delete_records(topic, &before, &mut waited)
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Writer> {
        let what = match transactional_id {
            Some(id) => format!("opening the writer with transactional id {id}"),
            None => "opening a writer".to_owned(),
        };
        let kafka = self.kafka();
        progress::watched(&what, || None, || kafka.open_writer(transactional_id))
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Consumer> {
        let kafka = self.kafka();
        progress::watched(
            &format!("opening a consumer of {topic}"),
            || None,
            || kafka.open_consumer(topic),
        )
    }
}

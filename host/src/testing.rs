//! Test helpers (cargo feature `testing`; release builds do not have them): direct Kafka access
//! for assertions, and the core's policies run natively over the host's capabilities (the same
//! protocol code as the component, without wasm), for tests and the benchmark harness.

use std::time::Duration;

use action_state_core::capabilities::{self as caps, CapResult, PolledBatch, TopicMetadata};
use action_state_core::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_core::{CleanupError, ControlEntry, PartitionOffsets};
use rdkafka::admin::{AlterConfig, ResourceSpecifier};

use crate::kafka::admin::TopicInfo;
use crate::kafka::consumer::{Columns, Consumer, Payload};
use crate::kafka::errors::{from_code, from_rd, invalid};
use crate::kafka::writer::Writer;
use crate::kafka::{KafkaClients, KafkaResult, ffi};

/// A consumed record with its texts (lossy), for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRecord {
    pub partition: u32,
    pub offset: u64,
    pub key: Option<String>,
    pub value: Option<String>,
}

/// A plain consumer for assertions.
pub struct TestConsumer(Consumer);

impl TestConsumer {
    pub fn assign(&mut self, start: &[(u32, u64)]) -> KafkaResult<()> {
        self.0.assign(start)
    }

    pub fn poll(&mut self, max: u32, timeout: Duration) -> KafkaResult<Vec<TestRecord>> {
        let text = |p: &Option<Payload>| {
            p.as_ref()
                .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned())
        };
        Ok(self
            .0
            .poll(max, timeout)?
            .iter()
            .map(|r| TestRecord {
                partition: r.partition,
                offset: r.offset,
                key: text(&r.key),
                value: text(&r.value),
            })
            .collect())
    }
}

impl KafkaClients {
    pub fn describe_topics(&mut self, topics: &[String]) -> KafkaResult<Vec<Option<TopicInfo>>> {
        self.admin()?.describe(topics, &[], false)
    }

    /// Creates a topic without waiting for it (see `create_topic_and_wait`).
    pub fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[(String, String)],
    ) -> KafkaResult<bool> {
        self.admin()?
            .create_topic(topic, partitions, replication_factor, configs)
    }

    pub fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: ffi::Spec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        self.admin()?.list_offsets(topic, partitions, spec)
    }

    pub fn replay_consumer(&mut self, topic: &str) -> KafkaResult<TestConsumer> {
        self.open_consumer(topic).map(TestConsumer)
    }

    /// The control log through the core's own read loop, natively.
    pub fn read_control_log(&mut self, topic: &str) -> Result<Vec<ControlEntry>, CleanupError> {
        action_state_core::policy::Policy::new(NativeCaps::new(self)).read_control_log(topic)
    }

    /// Produces one record (key and value optional) and returns its offset.
    pub fn produce(
        &mut self,
        topic: &str,
        partition: u32,
        key: Option<&str>,
        value: Option<&str>,
    ) -> KafkaResult<u64> {
        use rdkafka::producer::{FutureProducer, FutureRecord};
        let mut config = self.client_config();
        config.set("enable.idempotence", "true").set("acks", "all");
        let producer: FutureProducer = config.create().map_err(|e| from_rd(&e))?;
        let p = i32::try_from(partition).map_err(|_| invalid("partition out of range"))?;
        let mut record: FutureRecord<'_, str, str> = FutureRecord::to(topic).partition(p);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(value) = value {
            record = record.payload(value);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        let delivery = producer.send(record, self.settings().timeout);
        match runtime.block_on(delivery) {
            Ok(delivered) => Ok(u64::try_from(delivered.offset).unwrap_or(0)),
            Err((error, _)) => Err(from_rd(&error)),
        }
    }

    /// Replaces a topic's dynamic configuration with exactly these entries.
    pub fn alter_topic_configs(
        &mut self,
        topic: &str,
        entries: &[(String, String)],
    ) -> KafkaResult<()> {
        let admin = self.admin()?;
        let mut alter = AlterConfig::new(ResourceSpecifier::Topic(topic));
        for (name, value) in entries {
            alter = alter.set(name, value);
        }
        let options = rdkafka::admin::AdminOptions::new().request_timeout(Some(admin.timeout));
        let future = admin.client.alter_configs([&alter], &options);
        match admin
            .runtime
            .block_on(future)
            .map_err(|e| from_rd(&e))?
            .pop()
        {
            Some(Ok(_)) => Ok(()),
            Some(Err((_, code))) => Err(from_code(code, format!("topic {topic}: {code}"))),
            None => Err(invalid("no result")),
        }
    }

    pub fn delete_topic(&mut self, topic: &str) -> KafkaResult<()> {
        let admin = self.admin()?;
        let options = rdkafka::admin::AdminOptions::new().request_timeout(Some(admin.timeout));
        let future = admin.client.delete_topics(&[topic], &options);
        match admin
            .runtime
            .block_on(future)
            .map_err(|e| from_rd(&e))?
            .pop()
        {
            Some(Ok(_)) => Ok(()),
            Some(Err((_, code))) => Err(from_code(code, format!("topic {topic}: {code}"))),
            None => Err(invalid("no result")),
        }
    }
}

/// The host's capabilities as the core's `Capabilities`, natively: what the component's
/// imports do, without the component.
pub struct NativeCaps<'a> {
    kafka: &'a mut KafkaClients,
    started: std::time::Instant,
}

impl<'a> NativeCaps<'a> {
    pub fn new(kafka: &'a mut KafkaClients) -> Self {
        NativeCaps {
            kafka,
            started: std::time::Instant::now(),
        }
    }

    pub fn kafka(&mut self) -> &mut KafkaClients {
        self.kafka
    }
}

impl caps::Writer for Writer {
    fn append(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> CapResult<u64> {
        Writer::append(self, topic, partition, key, value)
    }
}

impl caps::Consumer for Consumer {
    fn assign(&mut self, start: &PartitionOffsets) -> CapResult<()> {
        Consumer::assign(self, &start.iter().collect::<Vec<_>>())
    }

    fn position(&mut self) -> CapResult<PartitionOffsets> {
        Ok(Consumer::position(self)?.into_iter().collect())
    }

    fn poll(&mut self, max: u32, timeout_ms: u32, with_data: bool) -> CapResult<PolledBatch> {
        let held = Consumer::poll(self, max, Duration::from_millis(u64::from(timeout_ms)))?;
        let c = Columns::of(held, with_data);
        PolledBatch::from_columns(c.partitions, c.offsets, c.flags, c.keys, c.values)
    }
}

impl caps::Capabilities for NativeCaps<'_> {
    type Writer = Writer;
    type Consumer = Consumer;

    fn now_ms(&mut self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn sleep_ms(&mut self, ms: u32) {
        std::thread::sleep(Duration::from_millis(u64::from(ms)));
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        u32::try_from(self.kafka.settings().timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1)
    }

    fn describe(
        &mut self,
        topics: &[&str],
        names: &[&str],
        with_offsets: bool,
    ) -> CapResult<Vec<Option<TopicMetadata>>> {
        let topics: Vec<String> = topics.iter().map(|t| (*t).to_owned()).collect();
        let names: Vec<String> = names.iter().map(|t| (*t).to_owned()).collect();
        let answer = self
            .kafka
            .admin()?
            .describe(&topics, &names, with_offsets)?;
        Ok(answer
            .into_iter()
            .map(|t| {
                t.map(|t| TopicMetadata {
                    topic: t.topic,
                    topic_id: t.topic_id,
                    partitions: t.partitions,
                    configs: t
                        .configs
                        .into_iter()
                        .map(|(name, value)| ConfigEntry { name, value })
                        .collect(),
                    offsets: t
                        .offsets
                        .into_iter()
                        .map(|(partition, beginning, end)| caps::PartitionRange {
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

    fn describe_cluster(&mut self, names: &[&str]) -> CapResult<ClusterDescription> {
        let names: Vec<String> = names.iter().map(|t| (*t).to_owned()).collect();
        let cluster = self.kafka.admin()?.describe_cluster(&names)?;
        Ok(ClusterDescription {
            brokers: cluster.brokers,
            configs: cluster
                .configs
                .into_iter()
                .map(|(name, value)| ConfigEntry { name, value })
                .collect(),
        })
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> CapResult<bool> {
        let configs: Vec<(String, String)> = configs
            .iter()
            .filter_map(|c| c.value.clone().map(|v| (c.name.clone(), v)))
            .collect();
        self.kafka
            .admin()?
            .create_topic(topic, partitions, replication_factor, &configs)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> CapResult<Vec<(u32, u64)>> {
        let spec = match spec {
            OffsetSpec::Earliest => ffi::Spec::Earliest,
            OffsetSpec::Latest => ffi::Spec::Latest,
        };
        self.kafka.admin()?.list_offsets(topic, partitions, spec)
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> CapResult<Vec<(u32, u64)>> {
        self.kafka
            .admin()?
            .delete_records(topic, &before.iter().collect::<Vec<_>>(), &mut |_| {})
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> CapResult<Writer> {
        self.kafka.open_writer(transactional_id)
    }

    fn open_consumer(&mut self, topic: &str) -> CapResult<Consumer> {
        self.kafka.open_consumer(topic)
    }
}

//! Test helpers (cargo feature `testing`; release builds do not have them): direct Kafka access
//! for assertions, and the decorators of the host's capabilities that break them on purpose:
//! failpoints (`failpoints`) and lying hosts (`lying`).

use std::time::Duration;

use action_state_format::{CleanupError, ControlEntry};
use rdkafka::admin::{AlterConfig, ResourceSpecifier};

use crate::kafka::admin::TopicInfo;
use crate::kafka::consumer::{Consumer, Payload};
use crate::kafka::errors::{from_code, from_rd, invalid};
use crate::kafka::{KafkaCapabilities, KafkaClients, KafkaResult, ffi};

mod failpoints;
mod lying;

pub use failpoints::Failpoints;
pub use lying::{Lie, Lying};

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
        action_state_kafka::policy::Policy::new(KafkaCapabilities::new(self))
            .read_control_log(topic)
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

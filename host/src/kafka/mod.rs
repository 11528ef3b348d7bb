//! Kafka capabilities over librdkafka: the host half of the WIT imports. Each method is one
//! capability call, bounded by the configured timeout, and counted.

pub mod config;
pub mod consumer;
pub mod fence;
pub mod ffi;

use std::time::{Duration, Instant};

use rdkafka::admin::{
    AdminClient, AdminOptions, AlterConfig, NewTopic, ResourceSpecifier, TopicReplication,
};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::util::Timeout;
use rdkafka::{Offset, TopicPartitionList};

pub use config::KafkaSettings;

/// A capability failure: which capability, and what Kafka said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityError {
    pub operation: &'static str,
    pub message: String,
    pub retriable: bool,
}

impl std::fmt::Display for CapabilityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kafka {} failed: {}", self.operation, self.message)
    }
}

pub type CapResult<T> = Result<T, CapabilityError>;

/// The requested configuration entries of one topic: (name, value if set).
pub type ConfigValues = Vec<(String, Option<String>)>;
/// One control-topic record: (offset, key, value).
pub type RawRecord = (u64, Option<String>, Option<String>);

fn from_rd(operation: &'static str, error: &RdError) -> CapabilityError {
    let retriable = matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::OperationTimedOut
                | RDKafkaErrorCode::RequestTimedOut
                | RDKafkaErrorCode::BrokerTransportFailure
                | RDKafkaErrorCode::AllBrokersDown
                | RDKafkaErrorCode::NotLeaderForPartition
                | RDKafkaErrorCode::LeaderNotAvailable
        )
    );
    CapabilityError {
        operation,
        message: error.to_string(),
        retriable,
    }
}

fn from_native(operation: &'static str, error: &ffi::NativeError) -> CapabilityError {
    CapabilityError {
        operation,
        message: error.message.clone(),
        retriable: error.is_retriable(),
    }
}

/// How many capability calls one operation made, by kind (each is one broker round trip, except
/// a control-topic read, which is a metadata query plus as many fetches as the log needs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    pub admin: u32,
    pub control_reads: u32,
    pub control_writes: u32,
    pub consumer_polls: u32,
}

/// The Kafka clients of one host, created on first use and reused.
pub struct KafkaClients {
    settings: KafkaSettings,
    runtime: tokio::runtime::Runtime,
    admin: Option<AdminClient<DefaultClientContext>>,
    producer: Option<FutureProducer>,
    writer: Option<fence::FencedWriter>,
    /// Topics this host created: metadata reaches every broker a little later, and a later call
    /// answered by a broker that has not seen the topic yet must not report it missing.
    created: Vec<String>,
    pub counts: RequestCounts,
}

impl KafkaClients {
    pub fn new(settings: KafkaSettings) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        Ok(KafkaClients {
            settings,
            runtime,
            admin: None,
            producer: None,
            writer: None,
            created: Vec::new(),
            counts: RequestCounts::default(),
        })
    }

    pub fn settings(&self) -> &KafkaSettings {
        &self.settings
    }

    fn client_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        for (key, value) in &self.settings.properties {
            config.set(key, value);
        }
        config
    }

    fn admin(&mut self, operation: &'static str) -> CapResult<&AdminClient<DefaultClientContext>> {
        if self.admin.is_none() {
            let admin = self
                .client_config()
                .create()
                .map_err(|e| from_rd(operation, &e))?;
            self.admin = Some(admin);
        }
        self.counts.admin += 1;
        self.admin.as_ref().ok_or_else(|| CapabilityError {
            operation,
            message: "admin client unavailable".into(),
            retriable: false,
        })
    }

    fn options(&self) -> AdminOptions {
        AdminOptions::new()
            .request_timeout(Some(self.settings.timeout))
            .operation_timeout(Some(self.settings.timeout))
    }

    pub fn describe_topics(
        &mut self,
        topics: &[String],
    ) -> CapResult<Vec<Option<ffi::DescribedTopic>>> {
        let timeout = self.settings.timeout;
        let admin = self.admin("describe-topics")?;
        ffi::describe_topics(admin.inner(), topics, timeout)
            .map_err(|e| from_native("describe-topics", &e))
    }

    pub fn describe_configs(
        &mut self,
        topics: &[String],
        names: &[String],
    ) -> CapResult<Vec<ConfigValues>> {
        let options = self.options();
        let specifiers: Vec<ResourceSpecifier<'_>> =
            topics.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
        let admin = self.admin("describe-configs")?;
        let future = admin.describe_configs(specifiers.iter(), &options);
        let results = self
            .runtime
            .block_on(future)
            .map_err(|e| from_rd("describe-configs", &e))?;
        let mut answer = Vec::with_capacity(results.len());
        for (topic, result) in topics.iter().zip(results) {
            let resource = result.map_err(|code| CapabilityError {
                operation: "describe-configs",
                message: format!("topic {topic}: {code}"),
                retriable: false,
            })?;
            answer.push(
                names
                    .iter()
                    .map(|name| {
                        (
                            name.clone(),
                            resource.get(name).and_then(|entry| entry.value.clone()),
                        )
                    })
                    .collect(),
            );
        }
        Ok(answer)
    }

    /// Describes topics and reads their configuration with both requests in flight at once.
    /// A topic that does not exist comes back as `None` (its configuration error is expected).
    pub fn inspect_topics(
        &mut self,
        topics: &[String],
        names: &[String],
    ) -> CapResult<Vec<Option<(ffi::DescribedTopic, ConfigValues)>>> {
        let deadline = Instant::now() + self.settings.timeout;
        loop {
            let answer = self.inspect_topics_once(topics, names)?;
            let unseen_created = topics
                .iter()
                .zip(&answer)
                .any(|(topic, state)| state.is_none() && self.created.contains(topic));
            if !unseen_created || Instant::now() > deadline {
                return Ok(answer);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn inspect_topics_once(
        &mut self,
        topics: &[String],
        names: &[String],
    ) -> CapResult<Vec<Option<(ffi::DescribedTopic, ConfigValues)>>> {
        let options = self.options();
        let timeout = self.settings.timeout;
        let specifiers: Vec<ResourceSpecifier<'_>> =
            topics.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
        let admin = self.admin("inspect-topics")?;
        // rdkafka enqueues the DescribeConfigs request when the future is created, so it is in
        // flight while DescribeTopics runs.
        let configs = admin.describe_configs(specifiers.iter(), &options);
        let described = ffi::describe_topics(admin.inner(), topics, timeout);
        let configs = self.runtime.block_on(configs);
        let described = described.map_err(|e| from_native("inspect-topics", &e))?;
        let configs = configs.map_err(|e| from_rd("inspect-topics", &e))?;
        let mut answer = Vec::with_capacity(topics.len());
        for ((topic, description), config) in topics.iter().zip(described).zip(configs) {
            let Some(description) = description else {
                answer.push(None);
                continue;
            };
            let resource = config.map_err(|code| CapabilityError {
                operation: "inspect-topics",
                message: format!("configuration of topic {topic}: {code}"),
                retriable: false,
            })?;
            let values = names
                .iter()
                .map(|name| {
                    (
                        name.clone(),
                        resource.get(name).and_then(|entry| entry.value.clone()),
                    )
                })
                .collect();
            answer.push(Some((description, values)));
        }
        Ok(answer)
    }

    /// Beginning and end of each partition, both listed at once; leader elections are retried
    /// like `list_offsets`.
    pub fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> CapResult<Vec<(u32, u64, u64)>> {
        let timeout = self.settings.timeout;
        let deadline = Instant::now() + timeout;
        loop {
            let admin = self.admin("offset-range")?;
            match ffi::list_offset_range(admin.inner(), topic, partitions, timeout) {
                Ok(ranges) => return Ok(ranges),
                Err(error) if error.is_retriable() && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(error) => return Err(from_native("offset-range", &error)),
            }
        }
    }

    pub fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[(String, String)],
    ) -> CapResult<bool> {
        let options = self.options();
        let partitions = i32::try_from(partitions).map_err(|_| CapabilityError {
            operation: "create-topic",
            message: format!("{partitions} partitions is too many"),
            retriable: false,
        })?;
        let mut new_topic = NewTopic::new(
            topic,
            partitions,
            TopicReplication::Fixed(i32::from(replication_factor)),
        );
        for (name, value) in configs {
            new_topic = new_topic.set(name, value);
        }
        let admin = self.admin("create-topic")?;
        let future = admin.create_topics([&new_topic], &options);
        let results = self
            .runtime
            .block_on(future)
            .map_err(|e| from_rd("create-topic", &e))?;
        match results.into_iter().next() {
            Some(Ok(_)) => {
                self.await_topic(topic, partitions.unsigned_abs())?;
                self.created.push(topic.to_owned());
                Ok(true)
            }
            Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Ok(false),
            Some(Err((_, code))) => Err(CapabilityError {
                operation: "create-topic",
                message: format!("topic {topic}: {code}"),
                retriable: false,
            }),
            None => Err(CapabilityError {
                operation: "create-topic",
                message: "no result".into(),
                retriable: true,
            }),
        }
    }

    /// Creation is asynchronous: waits (within the timeout) until metadata shows every partition.
    fn await_topic(&mut self, topic: &str, partitions: u32) -> CapResult<()> {
        let deadline = Instant::now() + self.settings.timeout;
        loop {
            let described = self.describe_topics(&[topic.to_owned()])?;
            if described
                .first()
                .and_then(Option::as_ref)
                .is_some_and(|d| d.partitions.len() == partitions as usize)
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(CapabilityError {
                    operation: "create-topic",
                    message: format!(
                        "topic {topic} was created but did not appear in metadata within {:?}",
                        self.settings.timeout
                    ),
                    retriable: true,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Read-only, so a leader that is still being elected (a fresh topic, a broker restart) is
    /// asked again until the timeout; any other error is reported at once.
    pub fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: ffi::Spec,
    ) -> CapResult<Vec<(u32, u64)>> {
        let timeout = self.settings.timeout;
        let deadline = Instant::now() + timeout;
        loop {
            let admin = self.admin("list-offsets")?;
            match ffi::list_offsets(admin.inner(), topic, partitions, spec, timeout) {
                Ok(offsets) => return Ok(offsets),
                Err(error) if error.is_retriable() && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(error) => return Err(from_native("list-offsets", &error)),
            }
        }
    }

    pub fn delete_records(
        &mut self,
        topic: &str,
        before: &[(u32, u64)],
    ) -> CapResult<Vec<(u32, u64)>> {
        let options = self.options();
        let mut list = TopicPartitionList::with_capacity(before.len());
        for &(partition, offset) in before {
            let (Ok(p), Ok(o)) = (i32::try_from(partition), i64::try_from(offset)) else {
                return Err(CapabilityError {
                    operation: "delete-records",
                    message: format!("partition {partition} offset {offset} out of range"),
                    retriable: false,
                });
            };
            list.add_partition_offset(topic, p, Offset::Offset(o))
                .map_err(|e| from_rd("delete-records", &e))?;
        }
        let admin = self.admin("delete-records")?;
        let future = admin.delete_records(&list, &options);
        let result = self
            .runtime
            .block_on(future)
            .map_err(|e| from_rd("delete-records", &e))?;
        let mut beginnings = Vec::with_capacity(before.len());
        for element in result.elements() {
            element.error().map_err(|e| CapabilityError {
                operation: "delete-records",
                message: format!("{topic}-{}: {e}", element.partition()),
                retriable: false,
            })?;
            if let (Ok(p), Offset::Offset(o)) =
                (u32::try_from(element.partition()), element.offset())
            {
                beginnings.push((p, u64::try_from(o).unwrap_or(0)));
            }
        }
        Ok(beginnings)
    }

    pub fn replay_consumer(&mut self, topic: &str) -> CapResult<consumer::ReplayConsumer> {
        consumer::ReplayConsumer::new(self.client_config(), topic)
    }

    /// Reads partition 0 of `topic` from its beginning to the end captured at the start.
    pub fn read_control_log(&mut self, topic: &str) -> CapResult<Vec<RawRecord>> {
        self.counts.control_reads += 1;
        let op = "read-control-log";
        let mut config = self.client_config();
        config
            .set("group.id", "action-state-cleanup-control-reader")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("isolation.level", "read_committed")
            .set("auto.offset.reset", "error")
            .set("enable.partition.eof", "true");
        let consumer: BaseConsumer = config.create().map_err(|e| from_rd(op, &e))?;
        let timeout = self.settings.timeout;
        // The end is the last stable offset (read_committed ListOffsets): a transaction another
        // writer still has open is not waited for, since none of it is committed.
        let admin_before = self.counts.admin;
        let low = self.list_offsets(topic, &[0], ffi::Spec::Earliest)?;
        let high = self.list_offsets(topic, &[0], ffi::Spec::Latest)?;
        let offset_of = |list: &[(u32, u64)]| {
            list.first()
                .map_or(0, |(_, o)| i64::try_from(*o).unwrap_or(i64::MAX))
        };
        let (low, high) = (offset_of(&low), offset_of(&high));
        self.counts.admin = admin_before; // counted as part of this control-topic read
        let mut records = Vec::new();
        if high <= low {
            return Ok(records);
        }
        let mut assignment = TopicPartitionList::new();
        assignment
            .add_partition_offset(topic, 0, Offset::Offset(low))
            .map_err(|e| from_rd(op, &e))?;
        consumer.assign(&assignment).map_err(|e| from_rd(op, &e))?;
        let deadline = Instant::now() + timeout;
        let mut position = low;
        while position < high {
            if Instant::now() > deadline {
                return Err(CapabilityError {
                    operation: op,
                    message: format!(
                        "timed out after {timeout:?} reading control topic {topic} at offset {position} of {high}"
                    ),
                    retriable: true,
                });
            }
            match consumer.poll(Duration::from_millis(200)) {
                Some(Ok(message)) => {
                    let offset = u64::try_from(message.offset()).unwrap_or(0);
                    if message.offset() < high {
                        let text = |bytes: Option<&[u8]>| {
                            bytes.map(|b| String::from_utf8_lossy(b).into_owned())
                        };
                        records.push((offset, text(message.key()), text(message.payload())));
                    }
                    position = message.offset() + 1;
                }
                Some(Err(RdError::PartitionEOF(_))) | None => {
                    // Transaction markers occupy offsets but are never delivered: trust the
                    // consumer's position once it has fetched past them.
                    if let Ok(list) = consumer.position()
                        && let Some(Offset::Offset(next)) =
                            list.find_partition(topic, 0).map(|e| e.offset())
                    {
                        position = position.max(next);
                    }
                }
                // A lost connection is reported as an event while librdkafka reconnects (a
                // broker died, a leader moved): keep reading until the deadline.
                Some(Err(error))
                    if matches!(
                        error.rdkafka_error_code(),
                        Some(
                            RDKafkaErrorCode::BrokerTransportFailure
                                | RDKafkaErrorCode::AllBrokersDown
                        )
                    ) => {}
                Some(Err(error)) => return Err(from_rd(op, &error)),
            }
        }
        Ok(records)
    }

    /// Becomes the only writer of `topic` (see `fence`).
    pub fn fence_control(&mut self, topic: &str) -> CapResult<()> {
        self.counts.admin += 1;
        self.writer = None;
        self.writer = Some(fence::FencedWriter::fence(
            self.client_config(),
            topic,
            self.settings.timeout,
        )?);
        Ok(())
    }

    /// Appends one record to partition 0 of the control topic: with `fenced`, in a transaction
    /// of the writer `fence_control` created for this topic; else with the idempotent producer.
    pub fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> Result<u64, fence::AppendFailure> {
        self.counts.control_writes += 1;
        if !fenced {
            return self
                .produce("append-control", topic, 0, Some(key), Some(value))
                .map_err(fence::AppendFailure::Failed);
        }
        let offset = match &self.writer {
            Some(writer) if writer.topic == topic => writer.append(&self.runtime, key, value)?,
            _ => {
                return Err(fence::AppendFailure::Fenced(format!(
                    "this host did not fence control topic {topic}"
                )));
            }
        };
        // A committed transaction becomes visible to read_committed readers only once its
        // marker is written, shortly after the commit returns: wait for that, so every reader
        // (a restore, a status, the next apply) sees this record once the append has returned.
        self.await_stable(topic, offset)
            .map_err(fence::AppendFailure::Failed)?;
        Ok(offset)
    }

    fn await_stable(&mut self, topic: &str, offset: u64) -> CapResult<()> {
        let deadline = Instant::now() + self.settings.timeout;
        loop {
            let stable = self.list_offsets(topic, &[0], ffi::Spec::Latest)?;
            if stable.first().is_some_and(|(_, lso)| *lso > offset) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(CapabilityError {
                    operation: "append-control",
                    message: format!(
                        "committed record at offset {offset} of {topic} did not become visible within {:?}",
                        self.settings.timeout
                    ),
                    retriable: true,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Produces one record with acks=all and idempotence and waits for the acknowledgement;
    /// returns its offset. Also used by tests and the demo to write action states.
    pub fn produce(
        &mut self,
        operation: &'static str,
        topic: &str,
        partition: u32,
        key: Option<&str>,
        value: Option<&str>,
    ) -> CapResult<u64> {
        let op = operation;
        if self.producer.is_none() {
            let mut config = self.client_config();
            config
                .set("enable.idempotence", "true")
                .set("acks", "all")
                .set("linger.ms", "0")
                .set(
                    "message.timeout.ms",
                    self.settings.timeout.as_millis().to_string(),
                );
            self.producer = Some(config.create().map_err(|e| from_rd(op, &e))?);
        }
        let producer = self.producer.as_ref().ok_or_else(|| CapabilityError {
            operation: op,
            message: "producer unavailable".into(),
            retriable: false,
        })?;
        let partition = i32::try_from(partition).map_err(|_| CapabilityError {
            operation: op,
            message: format!("partition {partition} out of range"),
            retriable: false,
        })?;
        let mut record: FutureRecord<'_, str, str> = FutureRecord::to(topic).partition(partition);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(value) = value {
            record = record.payload(value);
        }
        let delivery = producer.send(record, Timeout::After(self.settings.timeout));
        match self.runtime.block_on(delivery) {
            Ok(delivered) => Ok(u64::try_from(delivered.offset).unwrap_or(0)),
            Err((error, _)) => Err(from_rd(op, &error)),
        }
    }

    /// Produces many records and waits for all acknowledgements (keys and values as text).
    pub fn produce_batch(
        &mut self,
        topic: &str,
        records: &[(u32, String, String)],
    ) -> CapResult<()> {
        let op = "produce";
        // One record through `produce` creates the producer and proves the topic is writable.
        let Some(((p0, k0, v0), rest)) = records.split_first() else {
            return Ok(());
        };
        self.produce(op, topic, *p0, Some(k0), Some(v0))?;
        let producer = self.producer.as_ref().ok_or_else(|| CapabilityError {
            operation: op,
            message: "producer unavailable".into(),
            retriable: false,
        })?;
        // `send_result` enqueues at once (an awaited `send` would only enqueue when polled, one
        // record per round trip); a full local queue is drained by waiting for earlier records.
        let mut pending = std::collections::VecDeque::with_capacity(rest.len());
        for (partition, key, value) in rest {
            let mut record: FutureRecord<'_, str, str> = FutureRecord::to(topic)
                .partition(i32::try_from(*partition).unwrap_or(0))
                .key(key.as_str())
                .payload(value.as_str());
            loop {
                match producer.send_result(record) {
                    Ok(delivery) => {
                        pending.push_back(delivery);
                        break;
                    }
                    Err((RdError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        record = back;
                        let Some(oldest) = pending.pop_front() else {
                            std::thread::sleep(Duration::from_millis(10));
                            continue;
                        };
                        wait_delivered(&self.runtime, oldest)?;
                    }
                    Err((error, _)) => return Err(from_rd(op, &error)),
                }
            }
        }
        for delivery in pending {
            wait_delivered(&self.runtime, delivery)?;
        }
        Ok(())
    }
    /// Replaces a topic's dynamic configuration with exactly these entries (AlterConfigs is not
    /// incremental: anything not named returns to the broker default). For tests and failpoints.
    pub fn alter_topic_configs(
        &mut self,
        topic: &str,
        entries: &[(String, String)],
    ) -> CapResult<()> {
        let options = self.options();
        let mut alter = AlterConfig::new(ResourceSpecifier::Topic(topic));
        for (name, value) in entries {
            alter = alter.set(name, value);
        }
        let admin = self.admin("alter-configs")?;
        let future = admin.alter_configs([&alter], &options);
        let results = self
            .runtime
            .block_on(future)
            .map_err(|e| from_rd("alter-configs", &e))?;
        match results.into_iter().next() {
            Some(Ok(_)) => Ok(()),
            Some(Err((_, code))) => Err(CapabilityError {
                operation: "alter-configs",
                message: format!("topic {topic}: {code}"),
                retriable: false,
            }),
            None => Err(CapabilityError {
                operation: "alter-configs",
                message: "no result".into(),
                retriable: true,
            }),
        }
    }

    /// Deletes a topic (tests use it to recreate a topic under the same name).
    pub fn delete_topic(&mut self, topic: &str) -> CapResult<()> {
        let options = self.options();
        let admin = self.admin("delete-topic")?;
        let future = admin.delete_topics(&[topic], &options);
        let results = self
            .runtime
            .block_on(future)
            .map_err(|e| from_rd("delete-topic", &e))?;
        match results.into_iter().next() {
            Some(Ok(_)) => Ok(()),
            Some(Err((_, code))) => Err(CapabilityError {
                operation: "delete-topic",
                message: format!("topic {topic}: {code}"),
                retriable: false,
            }),
            None => Err(CapabilityError {
                operation: "delete-topic",
                message: "no result".into(),
                retriable: true,
            }),
        }
    }
}

fn wait_delivered(
    runtime: &tokio::runtime::Runtime,
    delivery: rdkafka::producer::DeliveryFuture,
) -> CapResult<()> {
    match runtime.block_on(delivery) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err((error, _))) => Err(from_rd("produce", &error)),
        Err(_) => Err(CapabilityError {
            operation: "produce",
            message: "the producer was closed before delivery".into(),
            retriable: false,
        }),
    }
}

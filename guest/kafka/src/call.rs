//! A capability call as data. Every import of the `cleanup` world the core uses (the clock,
//! the operator's progress line and the plain Kafka operations) is one `Call`, answered with one
//! `Answer`. The seam (`Capabilities::call`) is that one method, so a layer that changes one
//! thing (classification, failpoints, lies, timing, tracing, counting) looks at the call or its
//! answer and passes it on, instead of re-spelling every operation. `Kafka` gives the policy
//! each call back as a typed method.

use crate::capabilities::{
    Capabilities, ErrorKind, KafkaError, KafkaResult, PolledBatch, TopicMetadata,
};
use crate::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_format::offsets::PartitionOffsets;

/// One call, with its arguments borrowed; a writer's or consumer's call carries the host's
/// writer or consumer (`W`, `K`) by reference.
#[derive(Debug)]
pub enum Call<'a, W, K> {
    /// `clock.now-ms`.
    Now,
    /// `clock.sleep-ms`.
    Sleep { ms: u32 },
    /// `clock.operation-timeout-ms`.
    OperationTimeout,
    /// `operator-events.retrying`: a step failed in a way that may pass and is tried again until
    /// its deadline, `remaining_ms` from now. Progress for the operator, not a Kafka operation: a
    /// host without one (the conformance world, the unit tests) shows nothing.
    Retrying { message: &'a str, remaining_ms: u64 },
    /// `kafka-admin.describe`.
    Describe {
        topics: &'a [&'a str],
        config_names: &'a [&'a str],
        with_offsets: bool,
    },
    /// `kafka-admin.describe-cluster`: the brokers, and the named configuration entries of the
    /// one with the lowest ID (as the host answered: the policy checks the shape).
    DescribeCluster { config_names: &'a [&'a str] },
    /// `kafka-admin.create-topic`.
    CreateTopic {
        topic: &'a str,
        partitions: u32,
        replication_factor: u16,
        configs: &'a [ConfigEntry],
    },
    /// `kafka-admin.list-offsets`: one entry per partition Kafka answered, as the host returned
    /// them (possibly incomplete).
    ListOffsets {
        topic: &'a str,
        partitions: &'a [u32],
        spec: OffsetSpec,
    },
    /// `kafka-admin.delete-records`.
    DeleteRecords {
        topic: &'a str,
        before: &'a PartitionOffsets,
    },
    /// `kafka-writer.writer.open`.
    OpenWriter { transactional_id: Option<&'a str> },
    /// `kafka-consumer.consumer.open`.
    OpenConsumer { topic: &'a str },
    /// `kafka-writer.writer.append`.
    Append {
        writer: &'a mut W,
        topic: &'a str,
        partition: u32,
        key: &'a str,
        value: &'a str,
    },
    /// `kafka-consumer.consumer.assign`.
    Assign {
        consumer: &'a mut K,
        start: &'a PartitionOffsets,
    },
    /// `kafka-consumer.consumer.position`.
    Position { consumer: &'a mut K },
    /// `kafka-consumer.consumer.poll`.
    Poll {
        consumer: &'a mut K,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    },
}

/// What a call answered: the case that belongs to it (`Call::name` says which).
#[derive(Debug)]
pub enum Answer<W, K> {
    /// `Now`: milliseconds on the host's monotonic clock.
    Now(u64),
    /// `OperationTimeout`: milliseconds.
    OperationTimeout(u32),
    /// `Sleep`, `Retrying` and `Assign`.
    Done,
    /// `Describe`: per topic asked for, its metadata or `None` when it does not exist.
    Topics(Vec<Option<TopicMetadata>>),
    Cluster(ClusterDescription),
    /// `CreateTopic`: whether this call created it.
    Created(bool),
    /// `ListOffsets` and `DeleteRecords`: per partition answered, its offset (the new
    /// beginning, for a deletion).
    Offsets(Vec<(u32, u64)>),
    Writer(W),
    Consumer(K),
    /// `Append`: the record's offset.
    Appended(u64),
    /// `Position`: the next offset per assigned partition.
    Positions(PartitionOffsets),
    Polled(PolledBatch),
}

impl<W, K> Call<'_, W, K> {
    /// The WIT import this call is (`describe`, `writer.append`, `sleep-ms`…).
    pub fn name(&self) -> &'static str {
        match self {
            Call::Now => "now-ms",
            Call::Sleep { .. } => "sleep-ms",
            Call::OperationTimeout => "operation-timeout-ms",
            Call::Retrying { .. } => "retrying",
            Call::Describe { .. } => "describe",
            Call::DescribeCluster { .. } => "describe-cluster",
            Call::CreateTopic { .. } => "create-topic",
            Call::ListOffsets { .. } => "list-offsets",
            Call::DeleteRecords { .. } => "delete-records",
            Call::OpenWriter { .. } => "writer.open",
            Call::OpenConsumer { .. } => "consumer.open",
            Call::Append { .. } => "writer.append",
            Call::Assign { .. } => "consumer.assign",
            Call::Position { .. } => "consumer.position",
            Call::Poll { .. } => "consumer.poll",
        }
    }

    /// Whether the call is a request to Kafka (not the clock or the operator's progress line).
    pub fn is_kafka(&self) -> bool {
        !matches!(
            self,
            Call::Now | Call::Sleep { .. } | Call::OperationTimeout | Call::Retrying { .. }
        )
    }
}

impl<W, K> Answer<W, K> {
    fn name(&self) -> &'static str {
        match self {
            Answer::Now(_) => "a time",
            Answer::OperationTimeout(_) => "a timeout",
            Answer::Done => "nothing",
            Answer::Topics(_) => "topic metadata",
            Answer::Cluster(_) => "a cluster description",
            Answer::Created(_) => "a creation",
            Answer::Offsets(_) => "offsets",
            Answer::Writer(_) => "a writer",
            Answer::Consumer(_) => "a consumer",
            Answer::Appended(_) => "an appended offset",
            Answer::Positions(_) => "positions",
            Answer::Polled(_) => "a poll",
        }
    }
}

/// The error for an answer of the wrong case: a layer or host that broke the seam.
fn mismatched<W, K>(call: &'static str, answer: &Answer<W, K>) -> KafkaError {
    KafkaError::new(
        ErrorKind::Other,
        format!("{call} was answered with {}", answer.name()),
    )
}

/// Each call as a typed method over any `Capabilities`: what the policy and the hosts' bindings
/// call. A clock answer of the wrong case fails closed (the time is the end of every deadline,
/// the operation timeout is zero), since a deadline must never be stretched by a broken layer.
pub trait Kafka: Capabilities {
    fn now_ms(&mut self) -> u64 {
        match self.call(Call::Now) {
            Ok(Answer::Now(ms)) => ms,
            _ => u64::MAX,
        }
    }

    fn sleep_ms(&mut self, ms: u32) {
        let _slept = self.call(Call::Sleep { ms });
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        match self.call(Call::OperationTimeout) {
            Ok(Answer::OperationTimeout(ms)) => ms,
            _ => 0,
        }
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        let _shown = self.call(Call::Retrying {
            message,
            remaining_ms,
        });
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        let call = Call::Describe {
            topics,
            config_names,
            with_offsets,
        };
        match self.call(call)? {
            Answer::Topics(topics) => Ok(topics),
            other => Err(mismatched("describe", &other)),
        }
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        match self.call(Call::DescribeCluster { config_names })? {
            Answer::Cluster(cluster) => Ok(cluster),
            other => Err(mismatched("describe-cluster", &other)),
        }
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        let call = Call::CreateTopic {
            topic,
            partitions,
            replication_factor,
            configs,
        };
        match self.call(call)? {
            Answer::Created(created) => Ok(created),
            other => Err(mismatched("create-topic", &other)),
        }
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let call = Call::ListOffsets {
            topic,
            partitions,
            spec,
        };
        match self.call(call)? {
            Answer::Offsets(offsets) => Ok(offsets),
            other => Err(mismatched("list-offsets", &other)),
        }
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        match self.call(Call::DeleteRecords { topic, before })? {
            Answer::Offsets(offsets) => Ok(offsets),
            other => Err(mismatched("delete-records", &other)),
        }
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Self::Writer> {
        match self.call(Call::OpenWriter { transactional_id })? {
            Answer::Writer(writer) => Ok(writer),
            other => Err(mismatched("writer.open", &other)),
        }
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Self::Consumer> {
        match self.call(Call::OpenConsumer { topic })? {
            Answer::Consumer(consumer) => Ok(consumer),
            other => Err(mismatched("consumer.open", &other)),
        }
    }

    fn append(
        &mut self,
        writer: &mut Self::Writer,
        topic: &str,
        partition: u32,
        key: &str,
        value: &str,
    ) -> KafkaResult<u64> {
        let call = Call::Append {
            writer,
            topic,
            partition,
            key,
            value,
        };
        match self.call(call)? {
            Answer::Appended(offset) => Ok(offset),
            other => Err(mismatched("writer.append", &other)),
        }
    }

    fn assign(
        &mut self,
        consumer: &mut Self::Consumer,
        start: &PartitionOffsets,
    ) -> KafkaResult<()> {
        match self.call(Call::Assign { consumer, start })? {
            Answer::Done => Ok(()),
            other => Err(mismatched("consumer.assign", &other)),
        }
    }

    fn position(&mut self, consumer: &mut Self::Consumer) -> KafkaResult<PartitionOffsets> {
        match self.call(Call::Position { consumer })? {
            Answer::Positions(positions) => Ok(positions),
            other => Err(mismatched("consumer.position", &other)),
        }
    }

    fn poll(
        &mut self,
        consumer: &mut Self::Consumer,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        let call = Call::Poll {
            consumer,
            max_records,
            timeout_ms,
            with_data,
        };
        match self.call(call)? {
            Answer::Polled(batch) => Ok(batch),
            other => Err(mismatched("consumer.poll", &other)),
        }
    }
}

impl<C: Capabilities + ?Sized> Kafka for C {}

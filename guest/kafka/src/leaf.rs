//! What answers calls at the bottom of a stack of layers: one method per WIT import, as the
//! imports are (the component's bindings, the host's Kafka clients, the in-memory fake). A leaf
//! is `Capabilities` through `answer`, the one place a call is taken apart into its operation.

use crate::capabilities::{Answer, Call, Capabilities, KafkaResult, PolledBatch, TopicMetadata};
use crate::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_format::offsets::PartitionOffsets;

/// The operations of a leaf, one per `Call` case.
pub trait Operations {
    type Writer;
    type Consumer;

    fn now_ms(&mut self) -> u64;
    fn sleep_ms(&mut self, ms: u32);
    fn operation_timeout_ms(&mut self) -> u32;
    /// Progress for the operator: a leaf without an operator (the conformance world, the unit
    /// tests) shows nothing.
    fn retrying(&mut self, _message: &str, _remaining_ms: u64) {}

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>>;
    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription>;
    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool>;
    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>>;
    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>>;
    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Self::Writer>;
    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Self::Consumer>;

    fn append(
        &mut self,
        writer: &mut Self::Writer,
        topic: &str,
        partition: u32,
        key: &str,
        value: &str,
    ) -> KafkaResult<u64>;
    fn assign(
        &mut self,
        consumer: &mut Self::Consumer,
        start: &PartitionOffsets,
    ) -> KafkaResult<()>;
    fn position(&mut self, consumer: &mut Self::Consumer) -> KafkaResult<PartitionOffsets>;
    fn poll(
        &mut self,
        consumer: &mut Self::Consumer,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch>;
}

impl<O: Operations> Capabilities for O {
    type Writer = O::Writer;
    type Consumer = O::Consumer;

    fn call(
        &mut self,
        call: Call<'_, O::Writer, O::Consumer>,
    ) -> KafkaResult<Answer<O::Writer, O::Consumer>> {
        answer(self, call)
    }
}

/// Answers `call` with the operation it names.
fn answer<O: Operations + ?Sized>(
    leaf: &mut O,
    call: Call<'_, O::Writer, O::Consumer>,
) -> KafkaResult<Answer<O::Writer, O::Consumer>> {
    Ok(match call {
        Call::Now => Answer::Now(leaf.now_ms()),
        Call::Sleep { ms } => {
            leaf.sleep_ms(ms);
            Answer::Done
        }
        Call::OperationTimeout => Answer::OperationTimeout(leaf.operation_timeout_ms()),
        Call::Retrying {
            message,
            remaining_ms,
        } => {
            leaf.retrying(message, remaining_ms);
            Answer::Done
        }
        Call::Describe {
            topics,
            config_names,
            with_offsets,
        } => Answer::Topics(leaf.describe(topics, config_names, with_offsets)?),
        Call::DescribeCluster { config_names } => {
            Answer::Cluster(leaf.describe_cluster(config_names)?)
        }
        Call::CreateTopic {
            topic,
            partitions,
            replication_factor,
            configs,
        } => Answer::Created(leaf.create_topic(topic, partitions, replication_factor, configs)?),
        Call::ListOffsets {
            topic,
            partitions,
            spec,
        } => Answer::Offsets(leaf.list_offsets(topic, partitions, spec)?),
        Call::DeleteRecords { topic, before } => {
            Answer::Offsets(leaf.delete_records(topic, before)?)
        }
        Call::OpenWriter { transactional_id } => {
            Answer::Writer(leaf.open_writer(transactional_id)?)
        }
        Call::OpenConsumer { topic } => Answer::Consumer(leaf.open_consumer(topic)?),
        Call::Append {
            writer,
            topic,
            partition,
            key,
            value,
        } => Answer::Appended(leaf.append(writer, topic, partition, key, value)?),
        Call::Assign { consumer, start } => {
            leaf.assign(consumer, start)?;
            Answer::Done
        }
        Call::Position { consumer } => Answer::Positions(leaf.position(consumer)?),
        Call::Poll {
            consumer,
            max_records,
            timeout_ms,
            with_data,
        } => Answer::Polled(leaf.poll(consumer, max_records, timeout_ms, with_data)?),
    })
}

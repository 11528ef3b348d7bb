//! The capabilities as the policy uses them: every error a host answers passes through the
//! core's table of protocol codes (`kafka_codes`) before any rule looks at its case, so a
//! broker's answer means the same in every host whatever the host's own table says.

use crate::capabilities::{
    Capabilities, Consumer, KafkaResult, PolledBatch, TopicMetadata, Writer,
};
use crate::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};
use action_state_format::offsets::PartitionOffsets;

/// A capability, writer or consumer whose errors are `KafkaError::classified`.
pub struct Classified<T>(pub T);

fn classified<T>(answer: KafkaResult<T>) -> KafkaResult<T> {
    answer.map_err(crate::kafka_codes::classified)
}

impl<W: Writer> Writer for Classified<W> {
    fn append(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> KafkaResult<u64> {
        classified(self.0.append(topic, partition, key, value))
    }
}

impl<R: Consumer> Consumer for Classified<R> {
    fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        classified(self.0.assign(start))
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        classified(self.0.position())
    }

    fn poll(
        &mut self,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        classified(self.0.poll(max_records, timeout_ms, with_data))
    }
}

impl<C: Capabilities> Capabilities for Classified<C> {
    type Writer = Classified<C::Writer>;
    type Consumer = Classified<C::Consumer>;

    fn now_ms(&mut self) -> u64 {
        self.0.now_ms()
    }

    fn sleep_ms(&mut self, ms: u32) {
        self.0.sleep_ms(ms);
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        self.0.operation_timeout_ms()
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        self.0.retrying(message, remaining_ms);
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        classified(self.0.describe(topics, config_names, with_offsets))
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        classified(self.0.describe_cluster(config_names))
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        classified(
            self.0
                .create_topic(topic, partitions, replication_factor, configs),
        )
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        classified(self.0.list_offsets(topic, partitions, spec))
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        classified(self.0.delete_records(topic, before))
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Self::Writer> {
        classified(self.0.open_writer(transactional_id).map(Classified))
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Self::Consumer> {
        classified(self.0.open_consumer(topic).map(Classified))
    }
}

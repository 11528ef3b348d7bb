//! The imports of the `cleanup` world (and of the `conformance` world, which shares them) over
//! any `Capabilities`: each WIT call is converted to the core's types, made on the store's
//! capabilities and its answer converted back. A bad resource handle traps; a Kafka failure is
//! the guest's `kafka-error`.

use std::time::Instant;

use action_state_kafka::capabilities::{Capabilities, Kafka};
use wasmtime::StoreLimits;
use wasmtime::component::{Resource, ResourceTable};

use super::ReplayedRecord;
use super::bindings::action_state::cleanup::{
    clock, kafka_admin, kafka_consumer, kafka_writer, operator_events, snapshot_store, types,
};
use super::convert::{core_config_entries, offset_list, partition_offsets, polled};
use super::events::SharedEvents;
use super::observed::Observed;
use super::{KafkaError, NewControlTopic, PartitionOffset, PartitionPreview, Plan, Review};
use crate::kafka::capabilities::HeldRecords;
use crate::kafka::close_in_background;

/// What a store's capabilities must be for the bindings: the core's seam, with writers and
/// consumers the resource table can hold, and consumers that keep their records in the host.
pub trait StoreCapabilities:
    Capabilities<Writer: Send + 'static, Consumer: HeldRecords + Send + 'static> + 'static
{
}

impl<C> StoreCapabilities for C where
    C: Capabilities<Writer: Send + 'static, Consumer: HeldRecords + Send + 'static> + 'static
{
}

/// Per-store host state: the capabilities, the operator's events and the guest's resources.
pub struct HostState<C> {
    /// The store's capabilities under the layer that counts and traces every call.
    pub(super) caps: Observed<C>,
    events: SharedEvents,
    table: ResourceTable,
    pub(super) limits: StoreLimits,
    /// The consumer whose poll was the latest: `next-batch` indexes its records.
    last_poll: Option<u32>,
    /// Where `snapshot-store` reads: local files and the object stores.
    pub(super) stores: crate::stores::SnapshotStores,
}

impl<C> HostState<C> {
    pub(super) fn new(caps: C, events: SharedEvents, limits: StoreLimits) -> Self {
        HostState {
            caps: Observed::new(caps),
            events,
            table: ResourceTable::new(),
            limits,
            last_poll: None,
            stores: crate::stores::SnapshotStores::default(),
        }
    }
}

type Answer<T> = wasmtime::Result<Result<T, KafkaError>>;

fn answer<T, U: From<T>>(result: Result<T, crate::kafka::KafkaError>) -> Answer<U> {
    Ok(result.map(U::from).map_err(KafkaError::from))
}

/// Reports a snapshot-store read on the process's timeline (`crate::trace`), under its own
/// label: a store request, not a Kafka one (those are `Observed`'s).
fn traced<T, E: std::fmt::Debug>(
    call: impl FnOnce() -> String,
    started: Instant,
    answer: Result<T, E>,
) -> wasmtime::Result<Result<T, E>> {
    if crate::trace::on() {
        let outcome = match &answer {
            Ok(_) => "ok".to_owned(),
            Err(error) => format!("{error:?}"),
        };
        crate::trace::step("store", started, || format!("{}: {outcome}", call()));
    }
    Ok(answer)
}

impl<C: StoreCapabilities> types::Host for HostState<C> {}

impl<C: StoreCapabilities> clock::Host for HostState<C> {
    fn now_ms(&mut self) -> wasmtime::Result<u64> {
        Ok(self.caps.now_ms())
    }

    fn sleep_ms(&mut self, ms: u32) -> wasmtime::Result<()> {
        self.caps.sleep_ms(ms);
        Ok(())
    }

    fn operation_timeout_ms(&mut self) -> wasmtime::Result<u32> {
        Ok(self.caps.operation_timeout_ms())
    }
}

fn names(texts: &[String]) -> Vec<&str> {
    texts.iter().map(String::as_str).collect()
}

impl<C: StoreCapabilities> kafka_admin::Host for HostState<C> {
    fn describe(
        &mut self,
        topics: Vec<String>,
        config_names: Vec<String>,
        with_offsets: bool,
    ) -> Answer<Vec<Option<kafka_admin::TopicMetadata>>> {
        let result = self
            .caps
            .describe(&names(&topics), &names(&config_names), with_offsets);
        Ok(result
            .map(|all| all.into_iter().map(|t| t.map(Into::into)).collect())
            .map_err(KafkaError::from))
    }

    fn describe_cluster(
        &mut self,
        config_names: Vec<String>,
    ) -> Answer<kafka_admin::ClusterDescription> {
        answer(self.caps.describe_cluster(&names(&config_names)))
    }

    fn create_topic(
        &mut self,
        topic: String,
        partitions: u32,
        replication_factor: u16,
        configs: Vec<kafka_admin::ConfigEntry>,
    ) -> Answer<bool> {
        let configs = core_config_entries(configs);
        answer(
            self.caps
                .create_topic(&topic, partitions, replication_factor, &configs),
        )
    }

    fn list_offsets(
        &mut self,
        topic: String,
        partitions: Vec<u32>,
        spec: kafka_admin::OffsetSpec,
    ) -> Answer<Vec<PartitionOffset>> {
        let result = self.caps.list_offsets(&topic, &partitions, spec.into());
        Ok(result.map(offset_list).map_err(KafkaError::from))
    }

    fn delete_records(
        &mut self,
        topic: String,
        before: Vec<PartitionOffset>,
    ) -> Answer<Vec<PartitionOffset>> {
        let result = self
            .caps
            .delete_records(&topic, &partition_offsets(&before));
        Ok(result.map(offset_list).map_err(KafkaError::from))
    }
}

/// The table's handle of a writer or consumer the guest names: the WIT's resource types are
/// placeholders, the table holds the capabilities' own.
fn borrowed<T: 'static, W>(handle: &Resource<W>) -> Resource<T> {
    Resource::new_borrow(handle.rep())
}

fn owned<T: 'static, W>(handle: &Resource<W>) -> Resource<T> {
    Resource::new_own(handle.rep())
}

impl<C: StoreCapabilities> kafka_writer::Host for HostState<C> {}

impl<C: StoreCapabilities> kafka_writer::HostWriter for HostState<C> {
    fn open(&mut self, transactional_id: Option<String>) -> Answer<Resource<kafka_writer::Writer>> {
        match self.caps.open_writer(transactional_id.as_deref()) {
            Ok(writer) => Ok(Ok(owned(&self.table.push(writer)?))),
            Err(error) => Ok(Err(error.into())),
        }
    }

    fn append(
        &mut self,
        writer: Resource<kafka_writer::Writer>,
        topic: String,
        partition: u32,
        key: String,
        value: String,
    ) -> Answer<u64> {
        let writer = self.table.get_mut(&borrowed::<C::Writer, _>(&writer))?;
        answer(self.caps.append(writer, &topic, partition, &key, &value))
    }

    fn drop(&mut self, writer: Resource<kafka_writer::Writer>) -> wasmtime::Result<()> {
        close_in_background(self.table.delete(owned::<C::Writer, _>(&writer))?);
        Ok(())
    }
}

impl<C: StoreCapabilities> kafka_consumer::Host for HostState<C> {}

impl<C: StoreCapabilities> kafka_consumer::HostConsumer for HostState<C> {
    fn open(&mut self, topic: String) -> Answer<Resource<kafka_consumer::Consumer>> {
        match self.caps.open_consumer(&topic) {
            Ok(consumer) => Ok(Ok(owned(&self.table.push(consumer)?))),
            Err(error) => Ok(Err(error.into())),
        }
    }

    fn assign(
        &mut self,
        consumer: Resource<kafka_consumer::Consumer>,
        start: Vec<PartitionOffset>,
    ) -> Answer<()> {
        let consumer = self.table.get_mut(&borrowed::<C::Consumer, _>(&consumer))?;
        answer(self.caps.assign(consumer, &partition_offsets(&start)))
    }

    fn position(
        &mut self,
        consumer: Resource<kafka_consumer::Consumer>,
    ) -> Answer<Vec<PartitionOffset>> {
        let consumer = self.table.get_mut(&borrowed::<C::Consumer, _>(&consumer))?;
        let result = self.caps.position(consumer).map(|p| offset_list(p.iter()));
        Ok(result.map_err(KafkaError::from))
    }

    fn poll(
        &mut self,
        consumer: Resource<kafka_consumer::Consumer>,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> Answer<kafka_consumer::PolledBatch> {
        self.last_poll = Some(consumer.rep());
        let consumer = self.table.get_mut(&borrowed::<C::Consumer, _>(&consumer))?;
        let result = self.caps.poll(consumer, max_records, timeout_ms, with_data);
        Ok(result
            .map(|batch| polled(batch, with_data))
            .map_err(KafkaError::from))
    }

    fn drop(&mut self, consumer: Resource<kafka_consumer::Consumer>) -> wasmtime::Result<()> {
        if self.last_poll == Some(consumer.rep()) {
            self.last_poll = None;
        }
        close_in_background(self.table.delete(owned::<C::Consumer, _>(&consumer))?);
        Ok(())
    }
}

impl<C: StoreCapabilities> operator_events::Host for HostState<C> {
    fn verified(&mut self, plan: Plan) -> wasmtime::Result<()> {
        self.events.with(|events| events.verified(&plan));
        Ok(())
    }

    fn before_commit(
        &mut self,
        plan_id: String,
        preview: Vec<PartitionPreview>,
        created: Option<NewControlTopic>,
    ) -> wasmtime::Result<Review> {
        Ok(self
            .events
            .with(|events| events.before_commit(&plan_id, &preview, created.as_ref())))
    }

    fn committed(&mut self, plan_id: String) -> wasmtime::Result<()> {
        self.events.with(|events| events.committed(&plan_id));
        Ok(())
    }

    fn retrying(&mut self, message: String, remaining_ms: u64) -> wasmtime::Result<()> {
        self.events
            .with(|events| events.retrying(&message, remaining_ms));
        Ok(())
    }
}

impl<C: StoreCapabilities> snapshot_store::Host for HostState<C> {
    fn read(
        &mut self,
        location: String,
        max_bytes: u64,
    ) -> wasmtime::Result<Result<Vec<u8>, snapshot_store::StoreError>> {
        let started = Instant::now();
        let answer = self.stores.read(&location, max_bytes).map_err(store_error);
        traced(
            || format!("snapshot-store read {location}"),
            started,
            answer,
        )
    }

    fn list_folder(
        &mut self,
        location: String,
    ) -> wasmtime::Result<Result<Vec<String>, snapshot_store::StoreError>> {
        let started = Instant::now();
        let answer = self.stores.list(&location).map_err(store_error);
        traced(
            || format!("snapshot-store list-folder {location}"),
            started,
            answer,
        )
    }
}

fn store_error(error: crate::stores::StoreError) -> snapshot_store::StoreError {
    use crate::stores::StoreError as E;
    match error {
        E::NotFound(s) => snapshot_store::StoreError::NotFound(s),
        E::Denied(s) => snapshot_store::StoreError::Denied(s),
        E::Unreachable(s) => snapshot_store::StoreError::Unreachable(s),
        E::Unsupported(s) => snapshot_store::StoreError::Unsupported(s),
        E::TooLarge(n) => snapshot_store::StoreError::TooLarge(n),
        E::Failed(s) => snapshot_store::StoreError::Failed(s),
    }
}

/// Takes the records a batch names out of the consumer polled last. The indices come from the
/// guest: each must name a distinct record of that poll, whose bytes the host checked as text.
pub(super) fn take_records<C: StoreCapabilities>(
    state: &mut HostState<C>,
    indices: &[u32],
) -> wasmtime::Result<Vec<ReplayedRecord>> {
    if indices.is_empty() {
        return Ok(Vec::new());
    }
    let rep = state
        .last_poll
        .ok_or_else(|| wasmtime::Error::msg("next-batch named records but nothing was polled"))?;
    let consumer = state
        .table
        .get_mut(&Resource::<C::Consumer>::new_borrow(rep))?;
    let mut records = Vec::with_capacity(indices.len());
    for &index in indices {
        let held = consumer.held(index).ok_or_else(|| {
            wasmtime::Error::msg(format!(
                "next-batch named record {index}, which the last poll did not return"
            ))
        })?;
        let (Some(key), value) = (held.key.take(), held.value.take()) else {
            return Err(wasmtime::Error::msg(format!(
                "next-batch named record {index} twice or a record without a key"
            )));
        };
        let not_text = || {
            wasmtime::Error::msg(format!(
                "next-batch named record {index}, whose key or value is not UTF-8"
            ))
        };
        records.push(ReplayedRecord {
            partition: held.partition,
            offset: held.offset,
            key: key.into_text().ok_or_else(not_text)?,
            value: value
                .map(|v| v.into_text().ok_or_else(not_text))
                .transpose()?,
        });
    }
    Ok(records)
}

//! The `cleanup` component in wasmtime: the host implements the imported Kafka capabilities over
//! `KafkaClients` and calls the exported coordinator and recovery functions.

use std::time::Duration;

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{Engine, Store, StoreLimits, StoreLimitsBuilder};

use crate::engine::{GUEST_MEMORY_LIMIT, load_component};
use crate::failpoint;
use crate::kafka::{
    CapabilityError, KafkaClients, RequestCounts, consumer::ReplayConsumer, fence::AppendFailure,
    ffi,
};

/// Generated bindings of the `cleanup` world.
pub mod bindings {
    wasmtime::component::bindgen!({
        world: "cleanup",
        path: "../wit-0.1",
        with: {
            "action-state:cleanup/kafka-consumer.replay-consumer": crate::kafka::consumer::ReplayConsumer,
        },
    });
}

pub use bindings::action_state::cleanup::types::{CleanupError, PartitionOffset};
use bindings::action_state::cleanup::{
    control_log, kafka_admin, kafka_consumer, operator_events, types,
};
pub use bindings::exports::action_state::cleanup::coordinator::{
    ApplyOptions, ApplyOutcome, ApplyReport, StatusReport,
};
pub use bindings::exports::action_state::cleanup::recovery::{
    PartitionProgress, RecoveryPolicy, RecoveryVerdict, ReplayBatch, ReplayOptions, ReplayedRecord,
};
pub use operator_events::PartitionPreview;

/// Receives what the component tells the operator.
pub trait OperatorEvents {
    fn before_commit(&mut self, plan_id: &str, preview: &[PartitionPreview]);
}

/// Shows nothing.
pub struct NoEvents;

impl OperatorEvents for NoEvents {
    fn before_commit(&mut self, _plan_id: &str, _preview: &[PartitionPreview]) {}
}

/// Per-store host state.
pub struct HostState {
    kafka: KafkaClients,
    events: Box<dyn OperatorEvents>,
    table: ResourceTable,
    limits: StoreLimits,
    /// Whether this instance wrote a COMMITTED record (test failpoints key on it).
    committed: bool,
}

impl From<CapabilityError> for types::KafkaError {
    fn from(e: CapabilityError) -> Self {
        types::KafkaError {
            operation: e.operation.to_owned(),
            message: e.message,
            retriable: e.retriable,
        }
    }
}

impl types::Host for HostState {}

impl kafka_admin::Host for HostState {
    fn inspect_topics(
        &mut self,
        topics: Vec<String>,
        names: Vec<String>,
    ) -> Result<Vec<Option<kafka_admin::TopicState>>, types::KafkaError> {
        let states = self.kafka.inspect_topics(&topics, &names)?;
        Ok(topics
            .into_iter()
            .zip(states)
            .map(|(topic, state)| {
                state.map(|(d, configs)| kafka_admin::TopicState {
                    description: kafka_admin::TopicDescription {
                        topic,
                        topic_id: d.topic_id,
                        partitions: d.partitions,
                    },
                    configs: configs
                        .into_iter()
                        .map(|(name, value)| kafka_admin::ConfigEntry { name, value })
                        .collect(),
                })
            })
            .collect())
    }

    fn offset_range(
        &mut self,
        topic: String,
        partitions: Vec<u32>,
    ) -> Result<Vec<kafka_admin::PartitionRange>, types::KafkaError> {
        let ranges = self.kafka.offset_range(&topic, &partitions)?;
        Ok(ranges
            .into_iter()
            .map(|(partition, beginning, end)| kafka_admin::PartitionRange {
                partition,
                beginning,
                end,
            })
            .collect())
    }

    fn describe_topics(
        &mut self,
        topics: Vec<String>,
    ) -> Result<Vec<Option<kafka_admin::TopicDescription>>, types::KafkaError> {
        let described = self.kafka.describe_topics(&topics)?;
        Ok(topics
            .into_iter()
            .zip(described)
            .map(|(topic, d)| {
                d.map(|d| kafka_admin::TopicDescription {
                    topic,
                    topic_id: d.topic_id,
                    partitions: d.partitions,
                })
            })
            .collect())
    }

    fn describe_configs(
        &mut self,
        topics: Vec<String>,
        names: Vec<String>,
    ) -> Result<Vec<Vec<kafka_admin::ConfigEntry>>, types::KafkaError> {
        let configs = self.kafka.describe_configs(&topics, &names)?;
        Ok(configs
            .into_iter()
            .map(|entries| {
                entries
                    .into_iter()
                    .map(|(name, value)| kafka_admin::ConfigEntry { name, value })
                    .collect()
            })
            .collect())
    }

    fn create_topic(
        &mut self,
        topic: String,
        partitions: u32,
        replication_factor: u16,
        configs: Vec<kafka_admin::ConfigEntry>,
    ) -> Result<bool, types::KafkaError> {
        let configs: Vec<(String, String)> = configs
            .into_iter()
            .filter_map(|c| c.value.map(|v| (c.name, v)))
            .collect();
        Ok(self
            .kafka
            .create_topic(&topic, partitions, replication_factor, &configs)?)
    }

    fn list_offsets(
        &mut self,
        topic: String,
        partitions: Vec<u32>,
        spec: kafka_admin::OffsetSpec,
    ) -> Result<Vec<PartitionOffset>, types::KafkaError> {
        let spec = match spec {
            kafka_admin::OffsetSpec::Earliest => ffi::Spec::Earliest,
            kafka_admin::OffsetSpec::Latest => ffi::Spec::Latest,
        };
        let offsets = self.kafka.list_offsets(&topic, &partitions, spec)?;
        Ok(offsets
            .into_iter()
            .map(|(partition, offset)| PartitionOffset { partition, offset })
            .collect())
    }

    fn delete_records(
        &mut self,
        topic: String,
        before: Vec<PartitionOffset>,
    ) -> Result<Vec<PartitionOffset>, types::KafkaError> {
        if failpoint::active() == Some(failpoint::Failpoint::DeleteRecords) && self.committed {
            return Err(types::KafkaError {
                operation: "delete-records".into(),
                message: "failpoint delete-records is active".into(),
                retriable: true,
            });
        }
        let before: Vec<(u32, u64)> = before.iter().map(|po| (po.partition, po.offset)).collect();
        let after = self.kafka.delete_records(&topic, &before)?;
        if self.committed {
            failpoint::pause(failpoint::Stage::AfterDelete);
        }
        Ok(after
            .into_iter()
            .map(|(partition, offset)| PartitionOffset { partition, offset })
            .collect())
    }
}

impl control_log::Host for HostState {
    fn read_all(&mut self, topic: String) -> Result<Vec<types::ControlEntry>, types::KafkaError> {
        let records = self.kafka.read_control_log(&topic)?;
        Ok(records
            .into_iter()
            .map(|(offset, key, value)| types::ControlEntry { offset, key, value })
            .collect())
    }

    fn fence(&mut self, topic: String) -> Result<(), types::KafkaError> {
        Ok(self.kafka.fence_control(&topic)?)
    }

    fn append(
        &mut self,
        topic: String,
        key: String,
        value: String,
        fenced: bool,
    ) -> Result<u64, control_log::AppendError> {
        if fenced {
            failpoint::pause(failpoint::Stage::BeforeCommit);
        }
        let offset = self
            .kafka
            .append_control(&topic, &key, &value, fenced)
            .map_err(|failure| match failure {
                AppendFailure::Fenced(why) => control_log::AppendError::Fenced(why),
                AppendFailure::Failed(error) => control_log::AppendError::Failed(error.into()),
            })?;
        if fenced {
            self.committed = true;
            failpoint::pause(failpoint::Stage::AfterCommit);
        }
        if failpoint::active() == Some(failpoint::Failpoint::CompactAfterCommit)
            && let Ok(record) = action_state_core::ControlRecord::parse_value(&value)
            && record.status == action_state_core::Status::Committed
        {
            let policy = [
                ("cleanup.policy", "compact"),
                ("retention.ms", "-1"),
                ("retention.bytes", "-1"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()));
            self.kafka
                .alter_topic_configs(&record.plan.topic, &policy)
                .map_err(|e| control_log::AppendError::Failed(e.into()))?;
        }
        Ok(offset)
    }
}

impl kafka_consumer::Host for HostState {}

impl kafka_consumer::HostReplayConsumer for HostState {
    fn new(&mut self, topic: String) -> Resource<ReplayConsumer> {
        // Creating an rdkafka consumer only fails on invalid configuration, which the first
        // capability call (assign) reports; keep a consumer that reports it there.
        let consumer = match self.kafka.replay_consumer(&topic) {
            Ok(consumer) => consumer,
            Err(error) => ReplayConsumer::broken(&topic, error),
        };
        // A full resource table is a broken host invariant; the push only fails past u32::MAX.
        self.table
            .push(consumer)
            .unwrap_or_else(|_| Resource::new_own(u32::MAX))
    }

    fn assign(
        &mut self,
        consumer: Resource<ReplayConsumer>,
        start: Vec<PartitionOffset>,
    ) -> Result<(), types::KafkaError> {
        let start: Vec<(u32, u64)> = start.iter().map(|po| (po.partition, po.offset)).collect();
        let consumer = self
            .table
            .get_mut(&consumer)
            .map_err(|e| types::KafkaError {
                operation: "consumer-assign".into(),
                message: e.to_string(),
                retriable: false,
            })?;
        Ok(consumer.assign(&start)?)
    }

    fn poll(
        &mut self,
        consumer: Resource<ReplayConsumer>,
        max_records: u32,
        timeout_ms: u32,
    ) -> Result<Vec<kafka_consumer::ConsumedRecord>, types::KafkaError> {
        self.kafka.counts.consumer_polls += 1;
        let consumer = self
            .table
            .get_mut(&consumer)
            .map_err(|e| types::KafkaError {
                operation: "consumer-poll".into(),
                message: e.to_string(),
                retriable: false,
            })?;
        if failpoint::active() == Some(failpoint::Failpoint::ReplayStall) {
            std::thread::sleep(Duration::from_millis(u64::from(timeout_ms)));
            return Ok(Vec::new());
        }
        let batch = consumer.poll(max_records, Duration::from_millis(u64::from(timeout_ms)))?;
        Ok(batch
            .into_iter()
            .map(|r| kafka_consumer::ConsumedRecord {
                partition: r.partition,
                offset: r.offset,
                key: r.key,
                value: r.value,
                decode_error: r.decode_error,
            })
            .collect())
    }

    fn position(
        &mut self,
        consumer: Resource<ReplayConsumer>,
    ) -> Result<Vec<PartitionOffset>, types::KafkaError> {
        let consumer = self.table.get(&consumer).map_err(|e| types::KafkaError {
            operation: "consumer-position".into(),
            message: e.to_string(),
            retriable: false,
        })?;
        let positions = consumer.position()?;
        Ok(positions
            .into_iter()
            .map(|(partition, offset)| PartitionOffset { partition, offset })
            .collect())
    }

    fn drop(&mut self, consumer: Resource<ReplayConsumer>) -> wasmtime::Result<()> {
        self.table.delete(consumer)?;
        Ok(())
    }
}

impl operator_events::Host for HostState {
    fn before_commit(&mut self, plan_id: String, preview: Vec<PartitionPreview>) {
        self.events.before_commit(&plan_id, &preview);
    }
}

/// The cleanup component, compiled once (through the precompiled cache) and linked once.
pub struct CleanupComponent {
    engine: Engine,
    pre: bindings::CleanupPre<HostState>,
}

/// Wall-clock limit of one guest call, enforced with epochs (host waits count too).
pub const CALL_LIMIT: Duration = Duration::from_secs(3600);
const EPOCH_TICK: Duration = Duration::from_millis(100);

impl CleanupComponent {
    pub fn new(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Self> {
        let component = load_component(engine, "cleanup", bytes)?;
        let mut linker: Linker<HostState> = Linker::new(engine);
        bindings::Cleanup::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |state| {
            state
        })?;
        let pre = bindings::CleanupPre::new(linker.instantiate_pre(&component)?)?;
        start_epoch_ticker(engine);
        Ok(CleanupComponent {
            engine: engine.clone(),
            pre,
        })
    }

    /// A fresh instance with its own store and Kafka clients.
    pub fn instantiate(
        &self,
        kafka: KafkaClients,
        events: Box<dyn OperatorEvents>,
    ) -> wasmtime::Result<CleanupInstance> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(GUEST_MEMORY_LIMIT)
            .build();
        let state = HostState {
            kafka,
            events,
            table: ResourceTable::new(),
            limits,
            committed: false,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        store.set_epoch_deadline(epoch_ticks(CALL_LIMIT));
        let bindings = self.pre.instantiate(&mut store)?;
        Ok(CleanupInstance { store, bindings })
    }
}

fn epoch_ticks(limit: Duration) -> u64 {
    (limit.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

/// One ticker per process advances every engine's epoch; guest calls past their deadline trap.
fn start_epoch_ticker(engine: &Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("wasm-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(|_| ())
        .unwrap_or(());
}

/// One instance of the cleanup component.
pub struct CleanupInstance {
    store: Store<HostState>,
    bindings: bindings::Cleanup,
}

impl CleanupInstance {
    fn reset_deadline(&mut self) {
        self.store.set_epoch_deadline(epoch_ticks(CALL_LIMIT));
    }

    pub fn counts(&self) -> RequestCounts {
        self.store.data().kafka.counts
    }

    pub fn verify_plan(
        &mut self,
        json: &str,
    ) -> wasmtime::Result<Result<types::Plan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_verify_plan(&mut self.store, json)
    }

    pub fn render_plan(&mut self, plan: &types::Plan) -> wasmtime::Result<String> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_render_plan(&mut self.store, plan)
    }

    pub fn plan_from_markers(
        &mut self,
        recovery_point: &str,
        markers: &[String],
    ) -> wasmtime::Result<Result<types::Plan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_plan_from_markers(&mut self.store, recovery_point, markers)
    }

    pub fn parse_marker(
        &mut self,
        json: &str,
    ) -> wasmtime::Result<Result<types::RecoveryMarker, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_parse_marker(&mut self.store, json)
    }

    pub fn message(&mut self, error: &CleanupError) -> wasmtime::Result<String> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_message(&mut self.store, error)
    }

    pub fn apply(
        &mut self,
        plan_json: &str,
        options: &ApplyOptions,
    ) -> wasmtime::Result<Result<ApplyReport, CleanupError>> {
        self.reset_deadline();
        self.bindings.action_state_cleanup_coordinator().call_apply(
            &mut self.store,
            plan_json,
            options,
        )
    }

    pub fn status(
        &mut self,
        control_topic: &str,
    ) -> wasmtime::Result<Result<StatusReport, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_coordinator()
            .call_control_status(&mut self.store, control_topic)
    }

    pub fn check_recovery(
        &mut self,
        markers: &[String],
        policy: &RecoveryPolicy,
    ) -> wasmtime::Result<Result<RecoveryVerdict, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_recovery()
            .call_check_recovery(&mut self.store, markers, policy)
    }

    pub fn snapshot_marker(
        &mut self,
        topic: &str,
    ) -> wasmtime::Result<Result<String, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_recovery()
            .call_snapshot_marker(&mut self.store, topic)
    }

    /// Starts a recovery session (a guest resource owned by this instance's store).
    pub fn start_session(
        &mut self,
        topic: &str,
        policy: &RecoveryPolicy,
    ) -> wasmtime::Result<Result<RecoverySessionHandle, CleanupError>> {
        self.reset_deadline();
        let session = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        Ok(session
            .call_start(&mut self.store, topic, policy)?
            .map(RecoverySessionHandle))
    }

    pub fn restore(
        &mut self,
        session: &RecoverySessionHandle,
        markers: &[String],
        options: ReplayOptions,
    ) -> wasmtime::Result<Result<RecoveryVerdict, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        api.call_restore(&mut self.store, session.0, markers, options)
    }

    pub fn next_batch(
        &mut self,
        session: &RecoverySessionHandle,
        max_records: u32,
    ) -> wasmtime::Result<Result<ReplayBatch, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        api.call_next_batch(&mut self.store, session.0, max_records)
    }

    pub fn session_snapshot(
        &mut self,
        session: &RecoverySessionHandle,
    ) -> wasmtime::Result<Result<String, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        api.call_snapshot_marker(&mut self.store, session.0)
    }

    /// Drops the guest resource (and with it the host consumer).
    pub fn end_session(&mut self, session: RecoverySessionHandle) -> wasmtime::Result<()> {
        session.0.resource_drop(&mut self.store)
    }
}

/// A recovery session living in a `CleanupInstance`'s store.
#[derive(Debug)]
pub struct RecoverySessionHandle(wasmtime::component::ResourceAny);

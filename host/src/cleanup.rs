//! The `cleanup` component in wasmtime: the host implements its imports (plain Kafka
//! operations and a clock, see `kafka`) and calls the exported coordinator and recovery.

use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{Engine, Store, StoreLimits, StoreLimitsBuilder};

use crate::engine::{GUEST_MEMORY_LIMIT, load_component};
use crate::failpoint;
use crate::kafka::consumer::Consumer;
use crate::kafka::writer::Writer;
use crate::kafka::{KafkaClients, RequestCounts, ffi};

#[cfg(feature = "testing")]
pub mod conformance;
mod convert;

/// Generated bindings of the `cleanup` world, private: the host's API is the re-exports below.
mod bindings {
    wasmtime::component::bindgen!({
        world: "cleanup",
        path: "../wit",
        // A bad resource handle or a broken host invariant traps instead of posing as a Kafka
        // error, so every import may trap.
        imports: { default: trappable },
        with: {
            "action-state:cleanup/kafka-writer.writer": crate::kafka::writer::Writer,
            "action-state:cleanup/kafka-consumer.consumer": crate::kafka::consumer::Consumer,
        },
    });
}

pub use bindings::action_state::cleanup::types::{
    BoundaryRegression, BoundaryViolation, CleanupError, ControlRecord, KafkaDetail, KafkaError,
    KafkaFailure, PartitionOffset, Plan, RangeViolation, RecoveryMarker, Status, TopicChange,
    VersionedMarker,
};
use bindings::action_state::cleanup::{
    clock, kafka_admin, kafka_consumer, kafka_writer, operator_events, types,
};
pub use bindings::exports::action_state::cleanup::coordinator::{
    ApplyFailure, ApplyOptions, ApplyOutcome, ApplyReport, ApplyWarning, ControlTopicReplication,
    LivePartition, StatusReport,
};
pub use bindings::exports::action_state::cleanup::plans::{
    MarkerFilesPlan, MarkerSource, OperatorRef, SnapshotFile, SnapshotFileRef, SnapshotOperator,
    SnapshotSource, SnapshotSummary, StoredMarker,
};
pub use bindings::exports::action_state::cleanup::recovery::{
    PartitionProgress, PartitionRange, RecoveryPolicy, RecoveryRefusal, RecoveryVerdict,
    ReplayOptions,
};
pub use operator_events::{NewControlTopic, PartitionPreview, Review};

/// Receives what the component tells the operator (`operator-events`).
pub trait OperatorEvents {
    /// `created`: the control topic this apply created (a new cleanup history). The answer is
    /// the operator's: `Review::Decline` and the component commits nothing.
    fn before_commit(
        &mut self,
        plan_id: &str,
        preview: &[PartitionPreview],
        created: Option<&NewControlTopic>,
    ) -> Review;

    /// The plan is COMMITTED (written by this apply or found so).
    fn committed(&mut self, _plan_id: &str) {}

    /// A Kafka step is being retried until its deadline, `remaining_ms` from now.
    fn retrying(&mut self, _message: &str, _remaining_ms: u64) {}

    /// One Kafka request is still waiting for its answer after `elapsed` (reported about every
    /// second): `what` says which, e.g. the DeleteRecords of a wide plan, which waits for every
    /// replica. The host's own progress report; it decides nothing.
    fn waiting(&mut self, _what: &str, _elapsed: Duration) {}
}

/// Shows nothing and never asks: every review proceeds.
pub struct NoEvents;

impl OperatorEvents for NoEvents {
    fn before_commit(
        &mut self,
        _plan_id: &str,
        _preview: &[PartitionPreview],
        _created: Option<&NewControlTopic>,
    ) -> Review {
        Review::Proceed
    }
}

/// One replayed action state, handed over by the host (it never crossed into the guest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayedRecord {
    pub partition: u32,
    pub offset: u64,
    pub key: String,
    /// `None` is a tombstone.
    pub value: Option<String>,
}

/// What one `next-batch` returned, with the records resolved from the host's last poll.
#[derive(Debug, Clone)]
pub struct ReplayBatch {
    pub records: Vec<ReplayedRecord>,
    pub done: bool,
    pub progress: Vec<PartitionProgress>,
}

/// Per-store host state.
pub struct HostState {
    kafka: KafkaClients,
    events: Box<dyn OperatorEvents>,
    table: ResourceTable,
    limits: StoreLimits,
    started: Instant,
    /// The consumer whose poll was the latest: `next-batch` indexes its records.
    last_poll: Option<u32>,
    /// Whether this instance wrote a COMMITTED record (test failpoints key on it).
    committed: bool,
    /// A capability that misbehaves on purpose, to prove the conformance suite catches it.
    #[cfg(feature = "testing")]
    lie: Option<Lie>,
}

/// Ways a host capability can misbehave; the conformance suite must fail on each (tests only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lie {
    /// `list-offsets` LATEST answers one past the end.
    EndPlusOne,
    /// `writer.open` ignores the transactional id, so nothing is fenced.
    NoFencing,
    /// `describe` of a missing topic fails instead of answering `none`.
    MissingIsError,
    /// Every Kafka error is reported as `other`.
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
}

impl HostState {
    #[cfg(feature = "testing")]
    fn lying(&self, lie: Lie) -> bool {
        self.lie == Some(lie)
    }

    #[cfg(not(feature = "testing"))]
    fn lying(&self, _lie: Lie) -> bool {
        false
    }

    /// The error as the WIT case (or, for a lying host, as `other`).
    fn error(&self, error: crate::kafka::HostError) -> KafkaError {
        let mut error = error;
        if self.lying(Lie::EverythingIsOther) {
            error.kind = crate::kafka::ErrorKind::Other;
        }
        error.into()
    }
}

type Answer<T> = wasmtime::Result<Result<T, KafkaError>>;

/// Closes a client the component is done with on a thread of its own. librdkafka's close waits
/// for its threads (about 100 ms per consumer or producer, measured), time in which nothing is
/// pending: every append was acknowledged before it returned, and consumers commit nothing. The
/// component's call returns without that wait; a process that exits first loses nothing.
fn close_in_background<T: Send + 'static>(client: T) {
    let spawned = std::thread::Builder::new()
        .name("kafka-close".into())
        .spawn(move || drop(client));
    // Without a thread (resource exhaustion), the client was moved into the failed closure and
    // is closed there, on this thread.
    drop(spawned);
}

/// With `ASC_TRACE_KAFKA=1`, every capability call is reported on stderr with its duration
/// and outcome: where the wall clock goes when a cluster misbehaves.
fn traced<T, E: std::fmt::Debug>(
    call: &str,
    started: Instant,
    answer: wasmtime::Result<Result<T, E>>,
) -> wasmtime::Result<Result<T, E>> {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var("ASC_TRACE_KAFKA").is_ok_and(|v| v == "1")) {
        let outcome = match &answer {
            Ok(Ok(_)) => "ok".to_owned(),
            Ok(Err(error)) => format!("{error:?}"),
            Err(trap) => format!("trap: {trap}"),
        };
        eprintln!(
            "kafka: {call} {} ms: {outcome}",
            started.elapsed().as_millis()
        );
    }
    answer
}

impl types::Host for HostState {}

impl clock::Host for HostState {
    fn now_ms(&mut self) -> wasmtime::Result<u64> {
        Ok(u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    fn sleep_ms(&mut self, ms: u32) -> wasmtime::Result<()> {
        if self.lying(Lie::NoSleep) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(u64::from(ms)));
        Ok(())
    }

    fn operation_timeout_ms(&mut self) -> wasmtime::Result<u32> {
        let millis = self.kafka.settings().timeout.as_millis();
        Ok(u32::try_from(millis).unwrap_or(u32::MAX).max(1))
    }
}

impl kafka_admin::Host for HostState {
    fn describe(
        &mut self,
        topics: Vec<String>,
        config_names: Vec<String>,
        with_offsets: bool,
    ) -> Answer<Vec<Option<kafka_admin::TopicMetadata>>> {
        let started = Instant::now();
        let result = self
            .kafka
            .admin()
            .and_then(|a| a.describe(&topics, &config_names, with_offsets));
        if self.lying(Lie::MissingIsError)
            && let Ok(all) = &result
            && all.iter().any(Option::is_none)
        {
            return Ok(Err(self.error(crate::kafka::errors::from_code(
                rdkafka::types::RDKafkaErrorCode::UnknownTopicOrPartition,
                "lying host",
            ))));
        }
        let lie = self.lying(Lie::ReplicationUnknown);
        let answer = Ok(result
            .map(|all| {
                all.into_iter()
                    .map(|t| {
                        t.map(|mut t| {
                            if lie {
                                t.replication_factor = 0;
                            }
                            t.into()
                        })
                    })
                    .collect()
            })
            .map_err(|e| self.error(e)));
        traced(&format!("describe {topics:?}"), started, answer)
    }

    fn describe_cluster(
        &mut self,
        config_names: Vec<String>,
    ) -> Answer<kafka_admin::ClusterDescription> {
        let started = Instant::now();
        let result = self
            .kafka
            .admin()
            .and_then(|a| a.describe_cluster(&config_names));
        let lie = self.lying(Lie::ReplicationUnknown);
        let answer = Ok(result
            .map(|mut cluster| {
                if lie {
                    cluster
                        .configs
                        .iter_mut()
                        .for_each(|(_, value)| *value = None);
                }
                cluster.into()
            })
            .map_err(|e| self.error(e)));
        traced("describe-cluster", started, answer)
    }

    fn create_topic(
        &mut self,
        topic: String,
        partitions: u32,
        replication_factor: u16,
        configs: Vec<kafka_admin::ConfigEntry>,
    ) -> Answer<bool> {
        let started = Instant::now();
        let configs: Vec<(String, String)> = configs
            .into_iter()
            .filter_map(|c| c.value.map(|v| (c.name, v)))
            .collect();
        let result = self
            .kafka
            .admin()
            .and_then(|a| a.create_topic(&topic, partitions, replication_factor, &configs));
        traced(
            &format!("create-topic {topic}"),
            started,
            Ok(result.map_err(|e| self.error(e))),
        )
    }

    fn list_offsets(
        &mut self,
        topic: String,
        partitions: Vec<u32>,
        spec: kafka_admin::OffsetSpec,
    ) -> Answer<Vec<PartitionOffset>> {
        let started = Instant::now();
        let spec = match spec {
            kafka_admin::OffsetSpec::Earliest => ffi::Spec::Earliest,
            kafka_admin::OffsetSpec::Latest => ffi::Spec::Latest,
        };
        let lie = self.lying(Lie::EndPlusOne) && spec == ffi::Spec::Latest;
        let result = self
            .kafka
            .admin()
            .and_then(|a| a.list_offsets(&topic, &partitions, spec))
            .map(|all| {
                all.into_iter()
                    .map(|(p, o)| (p, o + u64::from(lie)))
                    .collect()
            });
        let answer = Ok(result.map(offsets).map_err(|e| self.error(e)));
        traced(&format!("list-offsets {topic} {spec:?}"), started, answer)
    }

    fn delete_records(
        &mut self,
        topic: String,
        before: Vec<PartitionOffset>,
    ) -> Answer<Vec<PartitionOffset>> {
        let started = Instant::now();
        if failpoint::active() == Some(failpoint::Failpoint::DeleteRecords) && self.committed {
            return Ok(Err(KafkaError::Other(KafkaDetail {
                code: 0,
                name: String::new(),
                message: "failpoint delete-records is active".into(),
            })));
        }
        let before: Vec<(u32, u64)> = before.iter().map(|po| (po.partition, po.offset)).collect();
        // Before COMMITTED the only delete is the permission probe (at the beginnings).
        let what = if self.committed {
            format!(
                "deleting the records below the boundary on {} partitions of {topic}",
                before.len()
            )
        } else {
            format!(
                "checking the DeleteRecords permission on {} partitions of {topic}",
                before.len()
            )
        };
        let HostState { kafka, events, .. } = self;
        let mut waiting = |elapsed: Duration| events.waiting(&what, elapsed);
        let result = kafka
            .admin()
            .and_then(|a| a.delete_records(&topic, &before, &mut waiting));
        if self.committed {
            failpoint::pause(failpoint::Stage::AfterDelete);
        }
        let answer = Ok(result.map(offsets).map_err(|e| self.error(e)));
        traced(&format!("delete-records {topic}"), started, answer)
    }
}

fn offsets(pairs: Vec<(u32, u64)>) -> Vec<PartitionOffset> {
    pairs
        .into_iter()
        .map(|(partition, offset)| PartitionOffset { partition, offset })
        .collect()
}

impl kafka_writer::Host for HostState {}

impl kafka_writer::HostWriter for HostState {
    fn open(&mut self, transactional_id: Option<String>) -> Answer<Resource<Writer>> {
        let id = transactional_id.filter(|_| !self.lying(Lie::NoFencing));
        let started = Instant::now();
        let answer = match self.kafka.open_writer(id.as_deref()) {
            Ok(writer) => Ok(Ok(self.table.push(writer)?)),
            Err(error) => Ok(Err(self.error(error))),
        };
        traced(&format!("writer.open {id:?}"), started, answer)
    }

    fn append(
        &mut self,
        writer: Resource<Writer>,
        topic: String,
        partition: u32,
        key: String,
        value: String,
    ) -> Answer<u64> {
        self.kafka.counts.control_writes += 1;
        let commit = failpoint::is_commit(&value);
        if commit {
            failpoint::pause(failpoint::Stage::BeforeCommit);
        }
        let started = Instant::now();
        let result = self
            .table
            .get(&writer)?
            .append(&topic, partition, &key, &value);
        let result = traced(&format!("writer.append {topic}"), started, Ok(result))?;
        if commit && result.is_ok() {
            self.committed = true;
            failpoint::pause(failpoint::Stage::AfterCommit);
            if failpoint::active() == Some(failpoint::Failpoint::CompactAfterCommit) {
                failpoint::compact_data_topic(&mut self.kafka, &value);
            }
        }
        Ok(result.map_err(|e| self.error(e)))
    }

    fn drop(&mut self, writer: Resource<Writer>) -> wasmtime::Result<()> {
        close_in_background(self.table.delete(writer)?);
        Ok(())
    }
}

impl kafka_consumer::Host for HostState {}

impl kafka_consumer::HostConsumer for HostState {
    fn open(&mut self, topic: String) -> Answer<Resource<Consumer>> {
        if self.lying(Lie::ConsumerOpenFails) {
            return Ok(Err(self.error(crate::kafka::HostError {
                kind: crate::kafka::ErrorKind::Transport,
                code: -195,
                name: "_TRANSPORT".into(),
                message: "the consumer could not be opened (test host)".into(),
            })));
        }
        match self.kafka.open_consumer(&topic) {
            Ok(consumer) => Ok(Ok(self.table.push(consumer)?)),
            Err(error) => Ok(Err(self.error(error))),
        }
    }

    fn assign(&mut self, consumer: Resource<Consumer>, start: Vec<PartitionOffset>) -> Answer<()> {
        let start: Vec<(u32, u64)> = start.iter().map(|po| (po.partition, po.offset)).collect();
        let result = self.table.get_mut(&consumer)?.assign(&start);
        Ok(result.map_err(|e| self.error(e)))
    }

    fn position(&mut self, consumer: Resource<Consumer>) -> Answer<Vec<PartitionOffset>> {
        let result = self.table.get(&consumer)?.position();
        Ok(result.map(offsets).map_err(|e| self.error(e)))
    }

    fn poll(
        &mut self,
        consumer: Resource<Consumer>,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> Answer<kafka_consumer::PolledBatch> {
        if with_data {
            self.kafka.counts.control_reads += 1;
        } else {
            self.kafka.counts.consumer_polls += 1;
        }
        self.last_poll = Some(consumer.rep());
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let with_data = with_data || self.lying(Lie::DataAlways);
        let held = self.table.get_mut(&consumer)?;
        if !with_data && failpoint::active() == Some(failpoint::Failpoint::ReplayStall) {
            held.held.clear();
            std::thread::sleep(timeout);
            return Ok(Ok(convert::polled(&[], false)));
        }
        let result = held
            .poll(max_records, timeout)
            .map(|records| convert::polled(records, with_data));
        Ok(result.map_err(|e| self.error(e)))
    }

    fn drop(&mut self, consumer: Resource<Consumer>) -> wasmtime::Result<()> {
        if self.last_poll == Some(consumer.rep()) {
            self.last_poll = None;
        }
        close_in_background(self.table.delete(consumer)?);
        Ok(())
    }
}

impl operator_events::Host for HostState {
    fn before_commit(
        &mut self,
        plan_id: String,
        preview: Vec<PartitionPreview>,
        created: Option<NewControlTopic>,
    ) -> wasmtime::Result<Review> {
        Ok(self
            .events
            .before_commit(&plan_id, &preview, created.as_ref()))
    }

    fn committed(&mut self, plan_id: String) -> wasmtime::Result<()> {
        self.events.committed(&plan_id);
        Ok(())
    }

    fn retrying(&mut self, message: String, remaining_ms: u64) -> wasmtime::Result<()> {
        self.events.retrying(&message, remaining_ms);
        Ok(())
    }
}

/// Takes the records a batch names out of the consumer polled last. The indices come from the
/// guest: each must name a distinct record of that poll, whose bytes the host checked as text.
fn take_records(state: &mut HostState, indices: &[u32]) -> wasmtime::Result<Vec<ReplayedRecord>> {
    if indices.is_empty() {
        return Ok(Vec::new());
    }
    let rep = state
        .last_poll
        .ok_or_else(|| wasmtime::Error::msg("next-batch named records but nothing was polled"))?;
    let consumer = state
        .table
        .get_mut(&Resource::<Consumer>::new_borrow(rep))?;
    let mut records = Vec::with_capacity(indices.len());
    for &index in indices {
        let held = consumer.held.get_mut(index as usize).ok_or_else(|| {
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
            started: Instant::now(),
            last_poll: None,
            committed: false,
            #[cfg(feature = "testing")]
            lie: None,
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

    /// Makes one capability misbehave from now on (`None`: behave), for tests of the
    /// component's rules against a failing or lying host.
    #[cfg(feature = "testing")]
    pub fn misbehave(&mut self, lie: Option<Lie>) {
        self.store.data_mut().lie = lie;
    }

    /// The Kafka settings this instance's capabilities use.
    pub fn settings(&self) -> &crate::kafka::KafkaSettings {
        self.store.data().kafka.settings()
    }

    pub fn counts(&self) -> RequestCounts {
        self.store.data().kafka.counts
    }

    pub fn verify_plan(&mut self, json: &str) -> wasmtime::Result<Result<Plan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_verify_plan(&mut self.store, json)
    }

    /// The one planner (`plans.compute-plan`): markers from texts, marker files or a Flink snapshot.
    pub fn plan(
        &mut self,
        recovery_point: &str,
        source: &MarkerSource,
    ) -> wasmtime::Result<Result<MarkerFilesPlan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_compute_plan(&mut self.store, recovery_point, source)
    }

    /// The state files a snapshot's markers live in (`plans.snapshot-files`).
    pub fn snapshot_files(
        &mut self,
        location: &str,
        metadata: &[u8],
        operator: Option<&OperatorRef>,
    ) -> wasmtime::Result<Result<Vec<SnapshotFileRef>, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_snapshot_files(&mut self.store, location, metadata, operator)
    }

    /// The OperatorID a uid or hash names (`plans.operator-id`).
    pub fn operator_id(
        &mut self,
        operator: &OperatorRef,
    ) -> wasmtime::Result<Result<String, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_operator_id(&mut self.store, operator)
    }

    /// What a snapshot holds (`plans.inspect-snapshot`).
    pub fn inspect_snapshot(
        &mut self,
        location: &str,
        metadata: &[u8],
        files: &[SnapshotFile],
    ) -> wasmtime::Result<Result<SnapshotSummary, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_inspect_snapshot(&mut self.store, location, metadata, files)
    }

    pub fn render_plan(&mut self, plan: &Plan) -> wasmtime::Result<String> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_render_plan(&mut self.store, plan)
    }

    pub fn plan_from_markers(
        &mut self,
        recovery_point: &str,
        markers: &[String],
    ) -> wasmtime::Result<Result<Plan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_plan_from_markers(&mut self.store, recovery_point, markers)
    }

    /// Starts planning from marker files handed over one at a time (`marker-files-planner`):
    /// the guest keeps only the running minimum, so each file's text can be read into the same
    /// buffer and is freed in the guest after its call.
    pub fn start_marker_files(
        &mut self,
        recovery_point: &str,
    ) -> wasmtime::Result<MarkerFilesPlanner> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_marker_planning()
            .marker_files_planner();
        api.call_constructor(&mut self.store, recovery_point)
            .map(MarkerFilesPlanner)
    }

    /// Splits one more marker file and takes its markers (see `start_marker_files`).
    pub fn add_marker_file(
        &mut self,
        planner: &MarkerFilesPlanner,
        name: &str,
        text: &str,
    ) -> wasmtime::Result<Result<(), CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_marker_planning()
            .marker_files_planner();
        api.call_add_file(&mut self.store, planner.0, name, text)
    }

    /// The plan of every file added; drops the guest resource.
    pub fn finish_marker_files(
        &mut self,
        planner: MarkerFilesPlanner,
    ) -> wasmtime::Result<Result<MarkerFilesPlan, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_marker_planning()
            .marker_files_planner();
        let answer = api.call_finish(&mut self.store, planner.0);
        planner.0.resource_drop(&mut self.store)?;
        answer
    }

    pub fn parse_marker(
        &mut self,
        json: &str,
    ) -> wasmtime::Result<Result<RecoveryMarker, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_parse_marker(&mut self.store, json)
    }

    /// Splits the marker file `name` (`plans.split-marker-file`); a refusal names the file.
    pub fn split_marker_file(
        &mut self,
        name: &str,
        text: &str,
    ) -> wasmtime::Result<Result<Vec<String>, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_split_marker_file(&mut self.store, name, text)
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
    ) -> wasmtime::Result<Result<ApplyReport, ApplyFailure>> {
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

    /// `coordinator.preview-plan`: what the plan would delete now (read-only).
    pub fn preview_plan(
        &mut self,
        plan_json: &str,
    ) -> wasmtime::Result<Result<Vec<PartitionPreview>, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_coordinator()
            .call_preview_plan(&mut self.store, plan_json)
    }

    pub fn check_recovery(
        &mut self,
        markers: &[String],
        policy: &RecoveryPolicy,
    ) -> wasmtime::Result<Result<RecoveryVerdict, RecoveryRefusal>> {
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

    /// The next batch of a replay, its records handed over from the host's last poll.
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
        let batch = match api.call_next_batch(&mut self.store, session.0, max_records)? {
            Ok(batch) => batch,
            Err(error) => return Ok(Err(error)),
        };
        let records = take_records(self.store.data_mut(), &batch.records)?;
        Ok(Ok(ReplayBatch {
            records,
            done: batch.done,
            progress: batch.progress,
        }))
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

/// A `marker-files-planner` living in a `CleanupInstance`'s store.
#[derive(Debug)]
pub struct MarkerFilesPlanner(wasmtime::component::ResourceAny);

/// A recovery session living in a `CleanupInstance`'s store.
#[derive(Debug)]
pub struct RecoverySessionHandle(wasmtime::component::ResourceAny);

//! The `cleanup` component in wasmtime: the host implements its imports over the core's
//! `Capabilities` (this host's are `kafka::KafkaCapabilities`) and calls the exported
//! coordinator and recovery.

use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store, StoreLimitsBuilder};

use crate::engine::{GUEST_MEMORY_LIMIT, load_component};
use crate::kafka::{KafkaCapabilities, KafkaClients, KafkaSettings};

#[cfg(feature = "testing")]
pub mod conformance;
mod convert;
mod events;
mod imports;
mod instance;
mod observed;

/// Generated bindings of the `cleanup` world, private: the host's API is the re-exports below.
mod bindings {
    wasmtime::component::bindgen!({
        world: "cleanup",
        path: "../wit",
        // A bad resource handle or a broken host invariant traps instead of posing as a Kafka
        // error, so every import may trap.
        imports: { default: trappable },
    });
}

#[cfg(feature = "testing")]
pub use crate::testing::Lie;
pub use bindings::action_state::cleanup::operator_events::{
    NewControlTopic, PartitionPreview, Review,
};
pub use bindings::action_state::cleanup::snapshot_store::StoreError as SnapshotStoreError;
pub use bindings::action_state::cleanup::types::{
    BoundaryRegression, BoundaryViolation, CleanupError, ControlRecord, FailureClass, KafkaDetail,
    KafkaError, KafkaFailure, PartitionOffset, Plan, RangeViolation, RecoveryMarker, Status,
    TopicChange, VersionedMarker,
};
pub use bindings::exports::action_state::cleanup::coordinator::{
    ApplyFailure, ApplyOptions, ApplyOutcome, ApplyReport, ApplyWarning, BoundaryOrigin,
    ControlTopicReplication, LivePartition, PlanTimes, StatusReport,
};
pub use bindings::exports::action_state::cleanup::plans::{
    MarkerFile, MarkerFilesPlan, MarkerSource, OperatorRef, SnapshotFile, SnapshotFileRef,
    SnapshotOperator, SnapshotSource, SnapshotSummary, StoredMarker,
};
pub use bindings::exports::action_state::cleanup::recovery::{
    PartitionProgress, PartitionRange, RecoveryPolicy, RecoveryRefusal, RecoveryVerdict,
    ReplayOptions, RestoreSource, StoredSnapshot,
};
pub use bindings::exports::action_state::cleanup::snapshots::{
    PartitionBound, PointFailure, Reads as SnapshotReads, RetainedFailure, RetainedPlan,
    RetainedPoint, SnapshotFailure, SnapshotPlan, StoreFailure,
};
pub use events::{NoEvents, OperatorEvents};
use imports::HostState;
pub use instance::{CleanupInstance, MarkerFilesPlanner, RecoverySessionHandle};

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

/// The capabilities an instance runs on: this host's Kafka clients.
#[cfg(not(feature = "testing"))]
type Caps = KafkaCapabilities;

/// In test builds, the Kafka clients with the failpoints (`ASC_FAILPOINT`, inert unless set)
/// and a lie the tests can switch on (`ASC_LIE`, or `CleanupInstance::misbehave`) as
/// decorators.
#[cfg(feature = "testing")]
type Caps = crate::testing::Lying<crate::testing::Failpoints<KafkaCapabilities>>;

#[cfg(not(feature = "testing"))]
fn decorated(kafka: KafkaCapabilities, _settings: &KafkaSettings) -> Caps {
    kafka
}

#[cfg(feature = "testing")]
fn decorated(kafka: KafkaCapabilities, settings: &KafkaSettings) -> Caps {
    crate::testing::Lying::from_env(crate::testing::Failpoints::from_env(kafka, settings))
}

/// The cleanup component, compiled once (through the precompiled cache) and linked once.
pub struct CleanupComponent {
    engine: Engine,
    pre: bindings::CleanupPre<HostState<Caps>>,
}

/// Wall-clock limit of one guest call, enforced with epochs (host waits count too).
pub const CALL_LIMIT: Duration = Duration::from_secs(3600);
const EPOCH_TICK: Duration = Duration::from_millis(100);

impl CleanupComponent {
    pub fn new(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Self> {
        let component = load_component(engine, "cleanup", bytes)?;
        let mut linker: Linker<HostState<Caps>> = Linker::new(engine);
        bindings::Cleanup::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
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
        let settings = kafka.settings().clone();
        let events = events::SharedEvents::new(events);
        let caps = KafkaCapabilities::new(kafka).reporting_waits(events.waiting());
        let mut store = new_store(&self.engine, decorated(caps, &settings), events);
        let bindings = self.pre.instantiate(&mut store)?;
        Ok(CleanupInstance {
            store,
            bindings,
            settings,
        })
    }
}

/// A store over `caps` with the guest's memory and time bounded.
fn new_store<C>(engine: &Engine, caps: C, events: events::SharedEvents) -> Store<HostState<C>> {
    let limits = StoreLimitsBuilder::new()
        .memory_size(GUEST_MEMORY_LIMIT)
        .build();
    let mut store = Store::new(engine, HostState::new(caps, events, limits));
    store.limiter(|state| &mut state.limits);
    store.set_epoch_deadline(epoch_ticks(CALL_LIMIT));
    store
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

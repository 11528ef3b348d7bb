//! Runs the capability conformance suite (world `conformance`) against this host's imports:
//! the same `HostState` implementations the cleanup component uses, linked the same way.

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store, StoreLimitsBuilder};

use super::{HostState, NoEvents};
use crate::engine::GUEST_MEMORY_LIMIT;
use crate::kafka::KafkaClients;

mod suite_bindings {
    wasmtime::component::bindgen!({
        world: "conformance",
        path: "../wit",
        imports: { default: trappable },
        with: {
            "action-state:cleanup/types": crate::cleanup::bindings::action_state::cleanup::types,
            "action-state:cleanup/clock": crate::cleanup::bindings::action_state::cleanup::clock,
            "action-state:cleanup/kafka-admin": crate::cleanup::bindings::action_state::cleanup::kafka_admin,
            "action-state:cleanup/kafka-writer": crate::cleanup::bindings::action_state::cleanup::kafka_writer,
            "action-state:cleanup/kafka-consumer": crate::cleanup::bindings::action_state::cleanup::kafka_consumer,
        },
    });
}

pub use suite_bindings::exports::action_state::cleanup::suite::{Check, Inputs, Report, Target};

/// Instantiates the suite over `kafka` and runs it once.
pub fn run(
    engine: &Engine,
    component_path: &str,
    kafka: KafkaClients,
    inputs: &Inputs,
) -> wasmtime::Result<Report> {
    run_with(engine, component_path, kafka, inputs, None)
}

/// As `run`, with a host capability that misbehaves on purpose (tests of the suite itself).
pub fn run_with(
    engine: &Engine,
    component_path: &str,
    kafka: KafkaClients,
    inputs: &Inputs,
    lie: Option<super::Lie>,
) -> wasmtime::Result<Report> {
    let component = Component::from_file(engine, component_path)?;
    let mut linker: Linker<HostState> = Linker::new(engine);
    suite_bindings::Conformance::add_to_linker::<HostState, HasSelf<HostState>>(
        &mut linker,
        |state| state,
    )?;
    super::start_epoch_ticker(engine);
    let state = HostState {
        kafka,
        events: Box::new(NoEvents),
        table: ResourceTable::new(),
        limits: StoreLimitsBuilder::new()
            .memory_size(GUEST_MEMORY_LIMIT)
            .build(),
        started: std::time::Instant::now(),
        last_poll: None,
        committed: false,
        lie,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limits);
    store.set_epoch_deadline(super::epoch_ticks(super::CALL_LIMIT));
    let suite = suite_bindings::Conformance::instantiate(&mut store, &component, &linker)?;
    suite
        .action_state_cleanup_suite()
        .call_run(&mut store, inputs)
}

//! Runs the capability conformance suite (world `conformance`) against this host's imports:
//! the same generic implementations the cleanup component uses, over the same capabilities.

use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, Linker};

use super::events::SharedEvents;
use super::{HostState, NoEvents, new_store};
use crate::kafka::{KafkaCapabilities, KafkaClients};
use crate::testing::{Lie, Lying};

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
    lie: Option<Lie>,
) -> wasmtime::Result<Report> {
    run_starting(engine, component_path, kafka, inputs, lie, || {})
}

/// As `run_with`, calling `starting` once the suite is instantiated, right before `run`: the
/// moment a harness that acts on the cluster during the run (`recreated-during-delete`) times
/// its steps from (instantiation takes seconds in a debug build).
pub fn run_starting(
    engine: &Engine,
    component_path: &str,
    kafka: KafkaClients,
    inputs: &Inputs,
    lie: Option<Lie>,
    starting: impl FnOnce(),
) -> wasmtime::Result<Report> {
    let component = Component::from_file(engine, component_path)?;
    let mut linker: Linker<HostState<Lying<KafkaCapabilities>>> = Linker::new(engine);
    suite_bindings::Conformance::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    super::start_epoch_ticker(engine);
    let mut caps = Lying::new(KafkaCapabilities::new(kafka));
    caps.misbehave(lie);
    let mut store = new_store(engine, caps, SharedEvents::new(Box::new(NoEvents)));
    let suite = suite_bindings::Conformance::instantiate(&mut store, &component, &linker)?;
    starting();
    suite
        .action_state_cleanup_suite()
        .call_run(&mut store, inputs)
}

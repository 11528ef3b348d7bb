//! The `validator` component in wasmtime: the pure plan functions, with an empty linker.

use std::path::Path;

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store};

use crate::engine::{GUEST_MEMORY_LIMIT, load_component};

/// Generated bindings of the `validator` world.
pub mod bindings {
    wasmtime::component::bindgen!({ world: "validator", path: "../wit" });
}

pub use bindings::action_state::cleanup::types::{CleanupError, PartitionOffset, Plan};
pub use bindings::exports::action_state::cleanup::plans::PartitionAdvance;
use bindings::{Validator, ValidatorPre};

/// The validator component, compiled once and instantiated per use.
pub struct ValidatorComponent {
    engine: Engine,
    pre: ValidatorPre<StoreData>,
}

/// Per-store state: only the memory limit, since the validator has no imports.
pub struct StoreData {
    limits: wasmtime::StoreLimits,
}

impl ValidatorComponent {
    /// Loads a validator component file. The linker is empty: instantiation fails if the
    /// component imports anything at all.
    pub fn from_file(engine: &Engine, path: &Path) -> wasmtime::Result<Self> {
        let bytes = std::fs::read(path)?;
        let component = load_component(engine, "validator", &bytes)?;
        Self::from_component(engine, &component)
    }

    pub fn from_component(engine: &Engine, component: &Component) -> wasmtime::Result<Self> {
        let linker: Linker<StoreData> = Linker::new(engine);
        let pre = ValidatorPre::new(linker.instantiate_pre(component)?)?;
        Ok(Self {
            engine: engine.clone(),
            pre,
        })
    }

    /// A fresh instance in its own store.
    pub fn instantiate(&self) -> wasmtime::Result<ValidatorInstance> {
        let limits = wasmtime::StoreLimitsBuilder::new()
            .memory_size(GUEST_MEMORY_LIMIT)
            .build();
        let mut store = Store::new(&self.engine, StoreData { limits });
        store.limiter(|data| &mut data.limits);
        store.set_epoch_deadline(u64::MAX);
        let bindings = self.pre.instantiate(&mut store)?;
        Ok(ValidatorInstance { store, bindings })
    }
}

/// One instance of the validator with typed calls.
pub struct ValidatorInstance {
    store: Store<StoreData>,
    bindings: Validator,
}

impl ValidatorInstance {
    pub fn verify_plan(&mut self, json: &str) -> wasmtime::Result<Result<Plan, CleanupError>> {
        let plans = self.bindings.action_state_cleanup_plans();
        plans.call_verify_plan(&mut self.store, json)
    }

    pub fn render_plan(&mut self, plan: &Plan) -> wasmtime::Result<String> {
        let plans = self.bindings.action_state_cleanup_plans();
        plans.call_render_plan(&mut self.store, plan)
    }

    pub fn plan_from_markers(
        &mut self,
        recovery_point: &str,
        markers: &[String],
    ) -> wasmtime::Result<Result<Plan, CleanupError>> {
        let plans = self.bindings.action_state_cleanup_plans();
        plans.call_plan_from_markers(&mut self.store, recovery_point, markers)
    }

    pub fn message(&mut self, error: &CleanupError) -> wasmtime::Result<String> {
        let plans = self.bindings.action_state_cleanup_plans();
        plans.call_message(&mut self.store, error)
    }
}

impl ValidatorInstance {
    pub fn replay_control_log(
        &mut self,
        entries: &[bindings::action_state::cleanup::types::ControlEntry],
    ) -> wasmtime::Result<
        Result<Vec<bindings::action_state::cleanup::types::ControlRecord>, CleanupError>,
    > {
        let plans = self.bindings.action_state_cleanup_plans();
        plans.call_replay_control_log(&mut self.store, entries)
    }

    pub fn effective_boundary(
        &mut self,
        plans: &[Plan],
    ) -> wasmtime::Result<Result<Vec<PartitionOffset>, CleanupError>> {
        let exported = self.bindings.action_state_cleanup_plans();
        exported.call_effective_boundary(&mut self.store, plans)
    }

    pub fn seal_plan(
        &mut self,
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: &[PartitionOffset],
    ) -> wasmtime::Result<Result<Plan, CleanupError>> {
        let exported = self.bindings.action_state_cleanup_plans();
        exported.call_seal_plan(
            &mut self.store,
            source_recovery_point,
            topic,
            topic_id,
            offsets,
        )
    }

    pub fn check_advance(
        &mut self,
        plan: &Plan,
        boundary: &[PartitionOffset],
    ) -> wasmtime::Result<Result<Vec<PartitionAdvance>, CleanupError>> {
        let exported = self.bindings.action_state_cleanup_plans();
        exported.call_check_advance(&mut self.store, plan, boundary)
    }
}

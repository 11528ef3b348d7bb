//! The built components themselves: what they import, and the SPEC test vector through wasm.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use std::path::Path;

use action_state_cleanup::engine::new_engine;
use action_state_cleanup::validator::ValidatorComponent;
use action_state_cleanup::{CLEANUP_COMPONENT, READER_COMPONENT_PATH, VALIDATOR_COMPONENT_PATH};
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

const SPEC_PLAN: &str = "{\n  \"schemaVersion\" : 1,\n  \"planId\" : \"99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d\",\n  \"sourceRecoveryPoint\" : \"checkpoint-42\",\n  \"topic\" : \"action-state\",\n  \"topicId\" : \"topic-id\",\n  \"offsets\" : {\n    \"0\" : 10,\n    \"1\" : 20\n  }\n}\n";

fn import_names(engine: &wasmtime::Engine, component: &Component) -> Vec<String> {
    let mut names: Vec<String> = component
        .component_type()
        .imports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn validator_instantiates_with_an_empty_linker_and_verifies_the_spec_vector() {
    let engine = new_engine().unwrap();
    let validator =
        ValidatorComponent::from_file(&engine, Path::new(VALIDATOR_COMPONENT_PATH)).unwrap();
    let mut instance = validator.instantiate().unwrap();
    let plan = instance.verify_plan(SPEC_PLAN).unwrap().unwrap();
    assert_eq!(
        plan.plan_id,
        "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d"
    );
    assert_eq!(instance.render_plan(&plan).unwrap(), SPEC_PLAN);
}

/// Names of imported functions, as `interface#function`.
fn imported_functions(engine: &wasmtime::Engine, component: &Component) -> Vec<String> {
    let mut functions = Vec::new();
    for (name, item) in component.component_type().imports(engine) {
        match item.ty {
            ComponentItem::ComponentInstance(instance) => {
                for (export, item) in instance.exports(engine) {
                    if !matches!(item.ty, ComponentItem::Type(_) | ComponentItem::Resource(_)) {
                        functions.push(format!("{name}#{export}"));
                    }
                }
            }
            _ => functions.push(name.to_owned()),
        }
    }
    functions.sort();
    functions
}

#[test]
fn validator_imports_no_function_at_all() {
    let engine = new_engine().unwrap();
    let bytes = std::fs::read(VALIDATOR_COMPONENT_PATH).unwrap();
    let component = Component::new(&engine, bytes).unwrap();
    // The shared `types` interface is imported for its type definitions only.
    assert_eq!(
        import_names(&engine, &component),
        ["action-state:cleanup/types@0.3.0"]
    );
    assert_eq!(
        imported_functions(&engine, &component),
        Vec::<String>::new()
    );
}

#[test]
fn reader_imports_the_snapshot_store_and_no_kafka() {
    let engine = new_engine().unwrap();
    let bytes = std::fs::read(READER_COMPONENT_PATH).unwrap();
    let component = Component::new(&engine, bytes).unwrap();
    assert_eq!(
        import_names(&engine, &component),
        [
            "action-state:cleanup/snapshot-store@0.3.0",
            "action-state:cleanup/types@0.3.0"
        ]
    );
    assert_eq!(
        imported_functions(&engine, &component),
        [
            "action-state:cleanup/snapshot-store@0.3.0#list-folder",
            "action-state:cleanup/snapshot-store@0.3.0#read"
        ]
    );
    let mut exports: Vec<String> = component
        .component_type()
        .exports(&engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    exports.sort();
    assert_eq!(
        exports,
        [
            "action-state:cleanup/plans@0.3.0",
            "action-state:cleanup/snapshots@0.3.0"
        ]
    );
}

#[test]
fn cleanup_imports_only_the_capabilities_our_wit_names() {
    let engine = new_engine().unwrap();
    let component = Component::new(&engine, CLEANUP_COMPONENT).unwrap();
    let allowed = [
        "action-state:cleanup/clock@0.3.0",
        "action-state:cleanup/kafka-admin@0.3.0",
        "action-state:cleanup/kafka-consumer@0.3.0",
        "action-state:cleanup/kafka-writer@0.3.0",
        "action-state:cleanup/operator-events@0.3.0",
        "action-state:cleanup/snapshot-store@0.3.0",
        "action-state:cleanup/types@0.3.0",
    ];
    let names = import_names(&engine, &component);
    assert!(
        names.iter().all(|n| allowed.contains(&n.as_str())),
        "unexpected imports: {names:?}"
    );
    let functions = imported_functions(&engine, &component);
    assert!(
        functions.contains(&"action-state:cleanup/kafka-admin@0.3.0#delete-records".to_owned()),
        "{functions:?}"
    );
    assert!(
        functions.contains(&"action-state:cleanup/snapshot-store@0.3.0#read".to_owned()),
        "{functions:?}"
    );
    assert!(
        functions.iter().all(|f| !f.contains("wasi")),
        "{functions:?}"
    );
}

#[test]
fn tampered_plan_is_refused_through_the_component_with_a_typed_error() {
    let engine = new_engine().unwrap();
    let validator =
        ValidatorComponent::from_file(&engine, Path::new(VALIDATOR_COMPONENT_PATH)).unwrap();
    let mut instance = validator.instantiate().unwrap();
    let tampered = SPEC_PLAN.replace("\"0\" : 10", "\"0\" : 11");
    let error = instance.verify_plan(&tampered).unwrap().unwrap_err();
    assert!(matches!(
        error,
        action_state_cleanup::validator::CleanupError::InvalidPlan(_)
    ));
    assert!(
        instance
            .message(&error)
            .unwrap()
            .contains("plan ID does not match its contents")
    );
}

fn offsets(pairs: &[(u32, u64)]) -> Vec<action_state_cleanup::validator::PartitionOffset> {
    pairs
        .iter()
        .map(
            |&(partition, offset)| action_state_cleanup::validator::PartitionOffset {
                partition,
                offset,
            },
        )
        .collect()
}

#[test]
fn effective_boundary_and_check_advance_refuse_duplicate_partitions() {
    use action_state_cleanup::validator::CleanupError;
    let engine = new_engine().unwrap();
    let validator =
        ValidatorComponent::from_file(&engine, Path::new(VALIDATOR_COMPONENT_PATH)).unwrap();
    let mut instance = validator.instantiate().unwrap();
    let valid = instance.verify_plan(SPEC_PLAN).unwrap().unwrap();
    let duplicated = action_state_cleanup::validator::Plan {
        offsets: offsets(&[(0, 50), (0, 5)]),
        ..valid.clone()
    };
    // Before: the list collapsed to its last entry, {0=5}.
    let error = instance
        .effective_boundary(&[valid.clone(), duplicated.clone()])
        .unwrap()
        .unwrap_err();
    assert!(matches!(error, CleanupError::InvalidPlan(_)), "{error:?}");
    assert_eq!(
        instance.message(&error).unwrap(),
        "Cleanup plan at position 2 contains duplicate Kafka partition 0 (offsets 50 and 5)"
    );
    let error = instance
        .check_advance(&duplicated, &offsets(&[(0, 10)]))
        .unwrap()
        .unwrap_err();
    assert!(matches!(error, CleanupError::InvalidPlan(_)), "{error:?}");
    assert!(
        instance
            .message(&error)
            .unwrap()
            .contains("duplicate Kafka partition 0 (offsets 50 and 5)")
    );
    let error = instance
        .check_advance(&valid, &offsets(&[(0, 50), (0, 5), (1, 20)]))
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(error, CleanupError::InvalidArgument(_)),
        "{error:?}"
    );
    assert_eq!(
        instance.message(&error).unwrap(),
        "Cleanup boundary contains duplicate Kafka partition 0 (offsets 50 and 5)"
    );
    // Well-formed input still works.
    let boundary = instance
        .effective_boundary(std::slice::from_ref(&valid))
        .unwrap()
        .unwrap();
    let pairs: Vec<(u32, u64)> = boundary
        .iter()
        .map(|po| (po.partition, po.offset))
        .collect();
    assert_eq!(pairs, [(0, 10), (1, 20)]);
    assert_eq!(
        instance
            .check_advance(&valid, &offsets(&[(0, 5), (1, 20)]))
            .unwrap()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn seal_plan_refuses_offsets_and_partitions_the_parser_refuses() {
    let engine = new_engine().unwrap();
    let validator =
        ValidatorComponent::from_file(&engine, Path::new(VALIDATOR_COMPONENT_PATH)).unwrap();
    let mut instance = validator.instantiate().unwrap();
    let mut seal = |pairs: &[(u32, u64)]| match instance
        .seal_plan("rp", "action-state", "topic-id", &offsets(pairs))
        .unwrap()
    {
        Ok(plan) => Ok(plan),
        Err(error) => Err(instance.message(&error).unwrap()),
    };
    assert_eq!(
        seal(&[(0, u64::MAX)]).unwrap_err(),
        "Cleanup plan offset for partition 0 must be an integer between 0 and 9223372036854775807, but was 18446744073709551615"
    );
    assert_eq!(
        seal(&[(u32::MAX, 1)]).unwrap_err(),
        "Cleanup plan partition 4294967295 is larger than the largest Kafka partition 2147483647"
    );
    let largest = seal(&[(2_147_483_647, 9_223_372_036_854_775_807)]).unwrap();
    // What seal-plan returns, the parser reads back.
    let text = instance.render_plan(&largest).unwrap();
    let read = instance.verify_plan(&text).unwrap().unwrap();
    assert_eq!(read.plan_id, largest.plan_id);
    assert_eq!(instance.render_plan(&read).unwrap(), text);
}

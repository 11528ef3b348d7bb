//! The wasmtime reference host of action-state-cleanup: it runs the cleanup component and
//! supplies Kafka capabilities over librdkafka.

pub mod cleanup;
pub mod engine;
pub mod error_kind;
pub mod kafka;
pub mod stores;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tools;
pub mod trace;
pub mod validator;

/// The validator component built by `build.rs`, as a file path (it is not embedded).
pub const VALIDATOR_COMPONENT_PATH: &str = env!("ASC_VALIDATOR_COMPONENT");
/// The reader component (world `reader`: the validator plus `snapshots` over `snapshot-store`, no
/// Kafka), built for the browser page's package, as a file path.
pub const READER_COMPONENT_PATH: &str = env!("ASC_READER_COMPONENT");
/// The cleanup component, embedded so the CLI is a single file.
pub static CLEANUP_COMPONENT: &[u8] = include_bytes!(env!("ASC_CLEANUP_COMPONENT"));
/// The capability conformance suite (world `conformance`), as a file path.
pub const CONFORMANCE_COMPONENT_PATH: &str = env!("ASC_CONFORMANCE_COMPONENT");

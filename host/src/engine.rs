//! One wasmtime `Engine` configured for our components, and the precompiled-component cache.
//!
//! Compiling a component with Cranelift takes ~100 ms; loading a precompiled one takes ~0.1 ms.
//! The cache key covers the component bytes and the engine's compatibility hash (wasmtime
//! version and every setting that affects code generation), so a stale entry is never loaded.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Largest linear memory a guest may grow to. Plans of a million partitions fit easily; a
/// hostile input that needs more is refused by the guest's allocator, not by the host's.
pub const GUEST_MEMORY_LIMIT: usize = 512 << 20;

/// Builds the engine: pooling allocator sized for a CLI or a small embedding, epoch
/// interruption for wall-clock limits on guest calls.
pub fn new_engine() -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    // `perf report` names guest functions when the JIT writes /tmp/perf-<pid>.map (profiling).
    if std::env::var_os("ASC_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(32);
    pool.total_core_instances(64);
    pool.total_memories(32);
    pool.total_tables(64);
    pool.max_memory_size(GUEST_MEMORY_LIMIT);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config)
}

/// Where precompiled components are kept: `$ASC_CACHE_DIR`, else the XDG cache directory.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ASC_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("action-state-cleanup"))
}

/// Loads `bytes` as a component, through the precompiled cache when one is usable. A cache that
/// cannot be read or written only costs the compile time; it never fails the load.
pub fn load_component(engine: &Engine, name: &str, bytes: &[u8]) -> wasmtime::Result<Component> {
    let Some(dir) = cache_dir() else {
        return Component::new(engine, bytes);
    };
    let path = dir.join(format!("{name}-{}.cwasm", cache_key(engine, bytes)));
    if path.is_file() {
        // SAFETY: the file was written by `precompile_component` of an engine with the same
        // compatibility hash (it is in the name) into the user's own cache directory; wasmtime
        // still checks the header and refuses an artifact from another configuration.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok(component);
        }
    }
    let precompiled = engine.precompile_component(bytes)?;
    store_atomically(&dir, &path, &precompiled);
    // SAFETY: the bytes were produced just now by this engine's `precompile_component`.
    unsafe { Component::deserialize(engine, &precompiled) }
}

fn cache_key(engine: &Engine, bytes: &[u8]) -> String {
    let mut engine_hash = DefaultHasher::new();
    engine
        .precompile_compatibility_hash()
        .hash(&mut engine_hash);
    let mut digest = Sha256::new();
    digest.update(engine_hash.finish().to_le_bytes());
    digest.update(bytes);
    digest.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes through a temporary file and a rename, so a concurrent reader never sees half a file.
fn store_atomically(dir: &Path, path: &Path, bytes: &[u8]) {
    if fs::create_dir_all(dir).is_err() {
        return;
    }
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    if fs::write(&temporary, bytes).is_ok() && fs::rename(&temporary, path).is_err() {
        let _ = fs::remove_file(&temporary);
    }
}

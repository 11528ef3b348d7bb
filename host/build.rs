//! Builds the WebAssembly components the host runs and embeds, and the conformance suite.
//!
//! The guest crates are compiled for `wasm32-unknown-unknown` by a nested cargo in a target
//! directory of their own (sharing ours would deadlock on its lock), then turned into components
//! with `wit-component`. The results land in `<target>/components/{validator,reader,cleanup,conformance}.wasm`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-unknown-unknown";
const GUEST_PROFILE: &str = "guest";
const COMPONENTS: [(&str, &str); 4] = [
    ("validator", "action_state_validator_component"),
    // The validator plus snapshots read through `snapshot-store`, no Kafka (the browser page).
    ("reader", "action_state_reader_component"),
    ("cleanup", "action_state_cleanup_component"),
    // The capability conformance suite (world `conformance`), run by the hosts' tests.
    ("conformance", "action_state_conformance_component"),
];

fn main() {
    if let Err(message) = build() {
        // A build script reports failure by exiting non-zero with a readable message.
        eprintln!("error: {message}");
        std::process::exit(1);
    }
}

fn build() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let workspace = manifest_dir
        .parent()
        .ok_or("the host crate must live inside the workspace")?
        .to_path_buf();
    // Every file is named: cargo compares a watched directory by its own modification time,
    // which an edit of a file inside it does not change (only adding or removing one does).
    for watched in ["guest", "wit", "Cargo.toml", "Cargo.lock"] {
        watch(&workspace.join(watched))?;
    }
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");

    ensure_guest_target()?;
    let target_dir = target_dir(&workspace)?;
    let guest_target_dir = target_dir.join("wasm-guest");
    compile_guests(&workspace, &guest_target_dir)?;

    let out_dir = target_dir.join("components");
    fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    for (name, crate_file) in COMPONENTS {
        let module_path = guest_target_dir
            .join(GUEST_TARGET)
            .join(GUEST_PROFILE)
            .join(format!("{crate_file}.wasm"));
        let module = fs::read(&module_path)
            .map_err(|e| format!("cannot read {}: {e}", module_path.display()))?;
        let component = wit_component::ComponentEncoder::default()
            .module(&module)
            .and_then(|encoder| encoder.validate(true).encode())
            .map_err(|e| {
                format!(
                    "cannot turn {} into a component: {e:#}",
                    module_path.display()
                )
            })?;
        let component_path = out_dir.join(format!("{name}.wasm"));
        write_if_changed(&component_path, &component)?;
        println!(
            "cargo:rustc-env=ASC_{}_COMPONENT={}",
            name.to_uppercase(),
            component_path.display()
        );
    }
    Ok(())
}

/// Asks cargo to rerun this script when `path` changes: a file, or a directory with every file
/// and directory below it (directories too, so that a new file is noticed).
fn watch(path: &Path) -> Result<(), String> {
    println!("cargo:rerun-if-changed={}", path.display());
    if path.is_dir() {
        let entries =
            fs::read_dir(path).map_err(|e| format!("cannot list {}: {e}", path.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", path.display()))?;
            watch(&entry.path())?;
        }
    }
    Ok(())
}

/// The workspace target directory: `CARGO_TARGET_DIR` when set, else found from `OUT_DIR`
/// (`<target>/<profile>/build/<crate>-<hash>/out`).
fn target_dir(workspace: &Path) -> Result<PathBuf, String> {
    if let Ok(dir) = env::var("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return Ok(if dir.is_absolute() {
            dir
        } else {
            workspace.join(dir)
        });
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    out_dir
        .ancestors()
        .nth(4)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("unexpected OUT_DIR layout: {}", out_dir.display()))
}

/// Makes sure the toolchain can build for the guest target. A fresh rustup install has only the
/// host target, and rustup does not install the targets a toolchain file lists on every machine
/// (auto-install may be off), so `cargo run` on a new machine would otherwise stop after minutes
/// of building with "can't find crate for `core`". With rustup present the target is added for
/// the toolchain running this build; without rustup the error says what to install.
fn ensure_guest_target() -> Result<(), String> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run {rustc} --print sysroot: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    let target_lib = sysroot.join("lib/rustlib").join(GUEST_TARGET).join("lib");
    if target_lib.is_dir() {
        return Ok(());
    }
    let mut rustup = Command::new("rustup");
    rustup.args(["target", "add", GUEST_TARGET]);
    // The rustup proxy names the toolchain it runs; add the target to that one, not the default.
    if let Ok(toolchain) = env::var("RUSTUP_TOOLCHAIN") {
        rustup.args(["--toolchain", &toolchain]);
    }
    println!(
        "cargo:warning=the {GUEST_TARGET} Rust target was missing; adding it with rustup (once)"
    );
    match rustup.status() {
        Ok(status) if status.success() && target_lib.is_dir() => Ok(()),
        Ok(status) => Err(format!(
            "rustup target add {GUEST_TARGET} failed ({status}); the wasm components need that target"
        )),
        Err(e) => Err(format!(
            "the {GUEST_TARGET} Rust target is not installed in {} and rustup cannot be run ({e}); \
             install the target for this toolchain, then build again",
            sysroot.display()
        )),
    }
}

fn compile_guests(workspace: &Path, guest_target_dir: &Path) -> Result<(), String> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args([
            "build",
            "--locked",
            "--target",
            GUEST_TARGET,
            "--profile",
            GUEST_PROFILE,
        ])
        .args(
            COMPONENTS
                .iter()
                .flat_map(|(_, krate)| ["-p".to_owned(), krate.replace('_', "-")]),
        )
        .arg("--target-dir")
        .arg(guest_target_dir);
    // The outer build's flags and wrappers are for the native host, not the wasm guest.
    for variable in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
    ] {
        command.env_remove(variable);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo for the wasm guests: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the wasm guests failed ({status}); is the target installed? run: rustup target add {GUEST_TARGET}"
        ));
    }
    Ok(())
}

/// Keeps the file's modification time when nothing changed, so dependants do not rebuild.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if fs::read(path).is_ok_and(|existing| existing == bytes) {
        return Ok(());
    }
    fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

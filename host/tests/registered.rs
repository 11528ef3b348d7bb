//! The end-to-end tests live in the workspace's `tests/` folder, outside this crate, so cargo only
//! runs the files that `host/Cargo.toml` names in a `[[test]]` entry. A new file there that
//! nobody registered would never run and never fail; this test makes it fail instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// The `path = "../tests/NAME.rs"` values of the manifest's `[[test]]` entries.
fn registered_paths(manifest: &str) -> BTreeSet<String> {
    manifest
        .lines()
        .filter_map(|line| {
            let value = line.trim().strip_prefix("path")?.trim_start();
            let value = value.strip_prefix('=')?.trim().trim_matches('"');
            value.strip_prefix("../tests/").map(str::to_owned)
        })
        .collect()
}

/// The `.rs` files directly in `tests/` (helpers live in `tests/support/`, a module folder).
fn end_to_end_files(folder: &Path) -> BTreeSet<String> {
    fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".rs"))
        .collect()
}

#[test]
fn every_end_to_end_test_file_is_registered_in_the_host_manifest() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let registered = registered_paths(&manifest);
    let files = end_to_end_files(&crate_dir.join("../tests"));
    assert!(!files.is_empty(), "no end-to-end test files found");
    let unregistered: Vec<_> = files.difference(&registered).collect();
    assert!(
        unregistered.is_empty(),
        "tests/{unregistered:?} would never run: add a [[test]] entry with path = \"../tests/<file>\" to host/Cargo.toml"
    );
    let missing: Vec<_> = registered.difference(&files).collect();
    assert!(
        missing.is_empty(),
        "host/Cargo.toml registers {missing:?}, which tests/ does not have"
    );
}

#[test]
fn registered_paths_reads_test_entries_only() {
    let manifest = "[[bin]]\npath = \"src/main.rs\"\n[[test]]\nname = \"a\"\npath = \"../tests/a.rs\"\n[[test]]\nname=\"b\"\npath=\"../tests/b.rs\"\n";
    let expected: BTreeSet<String> = ["a.rs", "b.rs"].into_iter().map(String::from).collect();
    assert_eq!(registered_paths(manifest), expected);
}

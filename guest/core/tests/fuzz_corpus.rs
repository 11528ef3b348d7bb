//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/*`) and every minimized crash
//! (`fuzz/regressions/<target>/*`) through the very checks the cargo-fuzz targets run
//! (`fuzz/checks.rs`), on the stable toolchain and without libFuzzer. A missing or empty corpus
//! folder fails the test: a silently skipped corpus would look like a pass.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "../../../fuzz/checks.rs"]
mod checks;

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match fs::read_dir(folder) {
        Ok(entries) => entries
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// Runs `check` on every file, collecting each failure with its path instead of stopping.
fn replay(check: fn(&[u8]), paths: &[PathBuf], failures: &mut Vec<String>) {
    for path in paths {
        let data = fs::read(path).unwrap();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&data))) {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{}: {why}", path.display()));
        }
    }
}

#[test]
fn committed_corpus_passes_every_check() {
    let corpus = fuzz_dir().join("corpus");
    assert!(
        corpus.is_dir(),
        "the fuzz corpus {} is missing (run fuzz/seed-corpus)",
        corpus.display()
    );
    let mut failures = Vec::new();
    for (target, check) in checks::TARGETS {
        let paths = files(&corpus.join(target));
        assert!(
            !paths.is_empty(),
            "the fuzz corpus of target {target} ({}) is missing or empty",
            corpus.join(target).display()
        );
        replay(check, &paths, &mut failures);
        println!("{target}: {} corpus inputs", paths.len());
    }
    assert!(
        failures.is_empty(),
        "{} inputs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn minimized_regressions_pass_every_check() {
    let regressions = fuzz_dir().join("regressions");
    let mut failures = Vec::new();
    for (target, check) in checks::TARGETS {
        let paths = files(&regressions.join(target));
        replay(check, &paths, &mut failures);
        println!("{target}: {} regression inputs", paths.len());
    }
    assert!(
        failures.is_empty(),
        "{} inputs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The decoder the control-log seeds rely on: raw entries come back byte for byte.
#[test]
fn control_log_seed_format_round_trips() {
    let mut data = vec![0u8, 1, 3, 0];
    data.extend_from_slice(b"key");
    data.extend_from_slice(&[1, 5, 0]);
    data.extend_from_slice(b"value");
    data.extend_from_slice(&[0, 0, 1, 0, 0]); // null key, empty value
    data.extend_from_slice(&[0, 1, 1, 0, b'k', 0]); // tombstone
    let entries = checks::decode_control_log(&data);
    let shown: Vec<(u64, Option<&str>, Option<&str>)> = entries
        .iter()
        .map(|e| (e.offset, e.key.as_deref(), e.value.as_deref()))
        .collect();
    assert_eq!(
        shown,
        [
            (0, Some("key"), Some("value")),
            (1, None, Some("")),
            (2, Some("k"), None)
        ]
    );
}

//! Replays the fuzz seeds derived from `fixtures/` (`fuzz/seeds.rs`) and every minimized crash
//! (`fuzz/regressions/<target>/*`) through the very checks the cargo-fuzz targets run
//! (`fuzz/checks.rs`), on the stable toolchain and without libFuzzer. The corpus a campaign
//! evolves stays out of the tree (`fuzz/corpus/`, ignored by git): `local_corpus_passes_every_check`
//! replays it on request (`--ignored`), and `write_seeds_into_fuzz_corpus` is what
//! `fuzz/seed-corpus` runs to start one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "../../../fuzz/checks.rs"]
mod checks;
#[path = "../../../fuzz/seeds.rs"]
mod seeds;

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fuzz_dir() -> PathBuf {
    workspace().join("fuzz")
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

/// Runs `check` on `data`, recording a failure under `label` instead of stopping.
fn replay_one(check: fn(&[u8]), label: &str, data: &[u8], failures: &mut Vec<String>) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(data))) {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        failures.push(format!("{label}: {why}"));
    }
}

/// Runs `check` on every file, collecting each failure with its path.
fn replay(check: fn(&[u8]), paths: &[PathBuf], failures: &mut Vec<String>) {
    for path in paths {
        let data = fs::read(path).unwrap();
        replay_one(check, &path.display().to_string(), &data, failures);
    }
}

fn assert_no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} inputs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A seed's file name: its SHA-256, so that writing the seeds twice adds nothing.
fn seed_name(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[test]
fn fixture_seeds_pass_every_check() {
    let seeds = seeds::fixture_seeds(&workspace().join("fixtures"));
    let mut failures = Vec::new();
    for (target, check) in checks::TARGETS {
        let mine: Vec<&seeds::Seed> = seeds.iter().filter(|s| s.target == target).collect();
        // A target without seeds would be a silently skipped check.
        assert!(
            !mine.is_empty(),
            "fixtures/ gives no seed for target {target}"
        );
        for seed in &mine {
            let label = format!("{target} seed {}", seed_name(&seed.data));
            replay_one(check, &label, &seed.data, &mut failures);
        }
        println!("{target}: {} seeds", mine.len());
    }
    assert_no_failures(&failures);
}

#[test]
fn minimized_regressions_pass_every_check() {
    let regressions = fuzz_dir().join("regressions");
    let mut failures = Vec::new();
    let mut total = 0;
    for (target, check) in checks::TARGETS {
        let paths = files(&regressions.join(target));
        replay(check, &paths, &mut failures);
        total += paths.len();
        println!("{target}: {} regression inputs", paths.len());
    }
    assert!(total > 0, "fuzz/regressions/ holds no input: was it moved?");
    assert_no_failures(&failures);
}

/// After a campaign: `cargo test -p action-state-format --test fuzz_corpus -- --ignored`.
#[test]
#[ignore = "replays the local fuzz/corpus/ a campaign evolved (not in the tree)"]
fn local_corpus_passes_every_check() {
    let corpus = fuzz_dir().join("corpus");
    let mut failures = Vec::new();
    for (target, check) in checks::TARGETS {
        let paths = files(&corpus.join(target));
        assert!(
            !paths.is_empty(),
            "{} is missing or empty (run fuzz/seed-corpus, then a campaign)",
            corpus.join(target).display()
        );
        replay(check, &paths, &mut failures);
        println!("{target}: {} corpus inputs", paths.len());
    }
    assert_no_failures(&failures);
}

/// What `fuzz/seed-corpus` runs: writes every seed into `fuzz/corpus/<target>/`, keeping what is
/// there.
#[test]
#[ignore = "writes fuzz/corpus/; run by fuzz/seed-corpus"]
fn write_seeds_into_fuzz_corpus() {
    let corpus = fuzz_dir().join("corpus");
    for (target, _) in checks::TARGETS {
        fs::create_dir_all(corpus.join(target)).unwrap();
    }
    let mut added = 0;
    for seed in seeds::fixture_seeds(&workspace().join("fixtures")) {
        let path = corpus.join(seed.target).join(seed_name(&seed.data));
        if !path.exists() {
            fs::write(&path, &seed.data).unwrap();
            added += 1;
        }
    }
    println!("{added} seeds added under {}", corpus.display());
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

/// The marker-file generator the `marker_file` target relies on: each layout byte gives its
/// shape, the texts to expect are the markers' own, and an offset above 2^53 is in the file
/// digit for digit.
#[test]
fn marker_file_generator_builds_each_layout() {
    // Per marker: versioned, one partition, taken from the pool (0), offset choice 3 (2^53 + 1),
    // topic and topic ID from the pools, canonical form.
    let marker = [0u8, 0, 0, 0, 3, 0, 0, 0];
    let canonical = r#"{"schemaVersion":1,"topic":"action-state","topicId":"Zm9vYmFyYmF6cXV4cXV1eA","offsets":{"0":9007199254740993}}"#;
    let quoted = canonical.replace('"', "\\\"");
    for (layout, expected) in [
        (0u8, format!("[{canonical},{canonical}]")),
        (1, format!("[\"{quoted}\",\"{quoted}\"]")),
        (2, format!("[{canonical},{canonical}]")),
        (3, format!("{canonical}\n{canonical}")),
    ] {
        let mut data = vec![layout, 1];
        data.extend_from_slice(&marker);
        data.extend_from_slice(&marker);
        let file = checks::generate_marker_file(&data);
        assert_eq!(file.text, expected, "layout {layout}");
        assert_eq!(file.pieces, [canonical, canonical], "layout {layout}");
        assert_eq!(file.markers.len(), 2);
        checks::check_marker_file(&data);
    }
    // One marker one per line is returned whole, whitespace included.
    let mut data = vec![3u8, 0];
    data.extend_from_slice(&marker);
    data.extend_from_slice(&[2, 0, 3, 1, 1]); // whitespace before: space, LF; after: tab
    let file = checks::generate_marker_file(&data);
    assert_eq!(file.text, format!(" \n{canonical}\t"));
    assert_eq!(file.pieces, std::slice::from_ref(&file.text));
    checks::check_marker_file(&data);
}

//! The fuzz seeds, derived from the golden scenarios in `fixtures/` — the only fuzz inputs kept
//! in the tree besides the minimized crashes of `regressions/`. `guest/format/tests/fuzz_corpus.rs`
//! replays them through every check on each `cargo test`, and `fuzz/seed-corpus` writes them into
//! `fuzz/corpus/<target>/` (ignored by git) to start a campaign.
//!
//!   plan            every fixtures/plan-*/plan.json and every */expected.json
//!   marker          every marker text of fixtures/markers-*/markers.json
//!   marker_file     every markers.json as it is, and its marker texts one per line and as a
//!                   JSON array of the texts themselves
//!   control_record  every non-null record value of fixtures/control-*/control-log.json
//!   control_log     every control log, in the raw-entry format `decode_control_log` reads
//!   snapshot        every fixtures/snapshots/**/_metadata (real Flink output), alone and
//!                   followed by each state file beside it, behind a little-endian u32 length
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test input builder: an unreadable fixture is a failed test"
)]

use std::fs;
use std::path::{Path, PathBuf};

use action_state_format::json::{self, Value};
use action_state_format::split_marker_file;

/// State files above this size are left out of snapshot seeds (libFuzzer works on small inputs).
const MAX_STATE_FILE_SEED: u64 = 65_536;

/// One seed: the target it feeds and its bytes.
pub struct Seed {
    pub target: &'static str,
    pub data: Vec<u8>,
}

/// Every seed, in a stable order (sorted fixture folders).
pub fn fixture_seeds(fixtures: &Path) -> Vec<Seed> {
    let mut seeds = Vec::new();
    let mut add = |target, data: Vec<u8>| seeds.push(Seed { target, data });
    for dir in folders(fixtures, "plan-") {
        if let Ok(data) = fs::read(dir.join("plan.json")) {
            add("plan", data);
        }
    }
    for dir in folders(fixtures, "") {
        if let Ok(data) = fs::read(dir.join("expected.json")) {
            add("plan", data);
        }
    }
    for dir in folders(fixtures, "markers-") {
        let file = fs::read_to_string(dir.join("markers.json")).unwrap();
        // The splitter hands back each element as written (a string element as the text it
        // holds): exactly the marker texts. A file it refuses still seeds marker_file.
        let texts = split_marker_file(&file).unwrap_or_default();
        for text in &texts {
            add("marker", text.clone().into_bytes());
        }
        add("marker_file", file.clone().into_bytes());
        if !texts.is_empty() {
            add(
                "marker_file",
                format!("{}\n", texts.join("\n")).into_bytes(),
            );
            add(
                "marker_file",
                format!("[\n{}\n]\n", texts.join(",\n")).into_bytes(),
            );
        }
    }
    for dir in folders(fixtures, "control-") {
        let log = fs::read_to_string(dir.join("control-log.json")).unwrap();
        let records = control_records(&log);
        for (_, value) in &records {
            if let Some(value) = value {
                add("control_record", value.clone().into_bytes());
            }
        }
        add("control_log", encode_log(&records));
    }
    for metadata in snapshot_metadata_files(&fixtures.join("snapshots")) {
        let head = fs::read(&metadata).unwrap();
        let length = u32::try_from(head.len()).unwrap().to_le_bytes();
        let with = |tail: &[u8]| [&length[..], &head, tail].concat();
        add("snapshot", with(&[]));
        let folder = metadata.parent().unwrap();
        for state in sorted_entries(folder) {
            let small = fs::metadata(&state).is_ok_and(|m| m.len() <= MAX_STATE_FILE_SEED);
            if state.is_file() && state.file_name() != Some("_metadata".as_ref()) && small {
                add("snapshot", with(&fs::read(&state).unwrap()));
            }
        }
    }
    seeds
}

/// A control log's records as (key, value), from the fixture's JSON array of objects.
fn control_records(log: &str) -> Vec<(Option<String>, Option<String>)> {
    let Value::Array(records) = json::parse(log).unwrap() else {
        panic!("a control-log.json fixture is not a JSON array");
    };
    let text = |record: &Value, name: &str| match record {
        Value::Object(members) => {
            members
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| match v {
                    Value::String(s) => Some(s.clone()),
                    _ => None,
                })
        }
        _ => None,
    };
    records
        .iter()
        .map(|r| (text(r, "key"), text(r, "value")))
        .collect()
}

/// A control log in the raw-entry format of `checks::decode_control_log`: per record a tag 0,
/// then key and value as fields (presence byte, little-endian u16 length, UTF-8 bytes).
fn encode_log(records: &[(Option<String>, Option<String>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let field = |text: &Option<String>, out: &mut Vec<u8>| match text {
        None => out.push(0),
        Some(text) => {
            let length = u16::try_from(text.len()).expect("a control record fits a u16 length");
            out.push(1);
            out.extend_from_slice(&length.to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
    };
    for (key, value) in records {
        out.push(0);
        field(key, &mut out);
        field(value, &mut out);
    }
    out
}

/// The sub-folders of `root` whose names start with `prefix`, sorted.
fn folders(root: &Path, prefix: &str) -> Vec<PathBuf> {
    sorted_entries(root)
        .into_iter()
        .filter(|path| path.is_dir())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect()
}

/// Every `_metadata` file under `root`, at any depth, sorted by path.
fn snapshot_metadata_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in sorted_entries(root) {
        if entry.is_dir() {
            found.extend(snapshot_metadata_files(&entry));
        } else if entry.file_name() == Some("_metadata".as_ref()) {
            found.push(entry);
        }
    }
    found.sort();
    found
}

fn sorted_entries(folder: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = fs::read_dir(folder)
        .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

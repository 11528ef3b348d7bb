//! Shared helpers of the end-to-end tests: the real broker, unique names, topic setup, and
//! running the built CLI.

#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test support: a failure is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use action_state_cleanup::kafka::{KafkaClients, KafkaSettings, ffi::Spec};

pub const CLI: &str = env!("CARGO_BIN_EXE_action-state-cleanup");

/// The broker: `ASC_KAFKA_BOOTSTRAP` (set by scripts/test), else `scripts/kafka start`, which
/// reuses a running broker. A test never passes without one.
pub fn bootstrap() -> &'static str {
    static BOOTSTRAP: OnceLock<String> = OnceLock::new();
    BOOTSTRAP.get_or_init(|| {
        if let Ok(bootstrap) = std::env::var("ASC_KAFKA_BOOTSTRAP")
            && !bootstrap.trim().is_empty()
        {
            return bootstrap;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka");
        let output = Command::new(script)
            .arg("start")
            .output()
            .expect("scripts/kafka runs");
        assert!(
            output.status.success(),
            "scripts/kafka start failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    })
}

/// A name no other test (or earlier run) uses.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{stamp}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn kafka() -> KafkaClients {
    let mut settings = KafkaSettings::new(bootstrap());
    settings.timeout = Duration::from_secs(30);
    KafkaClients::new(settings).expect("kafka clients")
}

pub const SAFE: [(&str, &str); 3] = [
    ("cleanup.policy", "compact,delete"),
    ("retention.ms", "-1"),
    ("retention.bytes", "-1"),
];

pub fn configs(entries: &[(&str, &str)]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Creates a data topic with the given configuration and waits until its metadata is visible.
pub fn create_topic(
    kafka: &mut KafkaClients,
    topic: &str,
    partitions: u32,
    entries: &[(&str, &str)],
) {
    assert!(
        kafka
            .create_topic(topic, partitions, 1, &configs(entries))
            .expect("create topic")
    );
    wait_for_topic(kafka, topic, partitions);
}

pub fn wait_for_topic(kafka: &mut KafkaClients, topic: &str, partitions: u32) {
    for _ in 0..100 {
        let described = kafka
            .describe_topics(&[topic.to_owned()])
            .expect("describe");
        if described[0]
            .as_ref()
            .is_some_and(|d| d.partitions.len() == partitions as usize)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("topic {topic} did not appear");
}

pub fn topic_id(kafka: &mut KafkaClients, topic: &str) -> String {
    kafka
        .describe_topics(&[topic.to_owned()])
        .expect("describe")[0]
        .as_ref()
        .expect("exists")
        .topic_id
        .clone()
}

/// Writes `count` action states to one partition.
pub fn produce(kafka: &mut KafkaClients, topic: &str, partition: u32, count: u64) {
    let records: Vec<(u32, String, String)> = (0..count)
        .map(|n| {
            (
                partition,
                format!("key-{partition}-{n}"),
                format!("{{\"n\":{n}}}"),
            )
        })
        .collect();
    kafka.produce_batch(topic, &records).expect("produce");
}

pub fn beginnings(kafka: &mut KafkaClients, topic: &str, partitions: &[u32]) -> Vec<(u32, u64)> {
    kafka
        .list_offsets(topic, partitions, Spec::Earliest)
        .expect("list offsets")
}

/// The data topic the real Flink fixtures' jobs wrote to (`action-state`, 4 partitions, safe
/// configuration), made once per broker (another test may have made it).
pub fn fixture_topic(kafka: &mut KafkaClients) {
    let configs = configs(&[
        ("cleanup.policy", "compact,delete"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]);
    let _ = kafka.create_topic("action-state", 4, 1, &configs);
    wait_for_topic(kafka, "action-state", 4);
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(name));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs the CLI with the given arguments and extra environment.
pub fn run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(CLI);
    command
        .args(args)
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_LIE");
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().expect("the CLI runs")
}

pub fn cli(args: &[&str]) -> Output {
    run(args, &[])
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts an exit code, showing both streams when it differs.
pub fn expect_code(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
        stdout(output),
        stderr(output)
    );
}

/// The marker of `topic` as of now, via the CLI (`marker --json`), written to a file.
pub fn marker_file(dir: &Path, name: &str, topic: &str) -> PathBuf {
    let output = cli(&[
        "marker",
        "--topic",
        topic,
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&output, 0);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, stdout(&output).trim()).expect("write marker");
    path
}

/// The control topic's records as (key, value) text pairs.
pub fn control_records(
    kafka: &mut KafkaClients,
    control: &str,
) -> Vec<(Option<String>, Option<String>)> {
    kafka
        .read_control_log(control)
        .expect("read control")
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

/// The acceptance story's topic: two partitions, C0 taken after 100/40 records and C1 after
/// 150/60, then 30 more records on partition 0. Returns (topic, C0 marker file, C1 marker file).
pub fn story(dir: &Path) -> (String, PathBuf, PathBuf) {
    let mut kafka = kafka();
    let topic = unique("story");
    create_topic(&mut kafka, &topic, 2, &SAFE);
    produce(&mut kafka, &topic, 0, 100);
    produce(&mut kafka, &topic, 1, 40);
    let c0 = marker_file(dir, "c0", &topic);
    produce(&mut kafka, &topic, 0, 50);
    produce(&mut kafka, &topic, 1, 20);
    let c1 = marker_file(dir, "c1", &topic);
    produce(&mut kafka, &topic, 0, 30);
    (topic, c0, c1)
}

/// `plan --markers M --recovery-point RP --output <dir>/plan-<RP>-<n>.json`, which must succeed.
pub fn plan_file(dir: &Path, markers: &Path, recovery_point: &str) -> PathBuf {
    let output_path = dir.join(format!("plan-{recovery_point}-{}.json", unique("p")));
    let output = cli(&[
        "plan",
        "--markers",
        markers.to_str().expect("utf-8 path"),
        "--recovery-point",
        recovery_point,
        "--output",
        output_path.to_str().expect("utf-8 path"),
    ]);
    expect_code(&output, 0);
    output_path
}

/// A plan of `recovery_point` for a two-partition topic, made by the CLI from one versioned
/// marker holding `offsets`.
pub fn two_partition_plan(
    dir: &Path,
    recovery_point: &str,
    topic: &str,
    id: &str,
    offsets: [u64; 2],
) -> PathBuf {
    let markers = dir.join(format!("marker-{recovery_point}-{}.json", unique("m")));
    std::fs::write(
        &markers,
        format!(
            "{{\"schemaVersion\":1,\"topic\":\"{topic}\",\"topicId\":\"{id}\",\"offsets\":{{\"0\":{},\"1\":{}}}}}",
            offsets[0], offsets[1]
        ),
    )
    .expect("marker file written");
    plan_file(dir, &markers, recovery_point)
}

/// Deletes `topic` and creates it again under the same name (a new topic ID), with the safe
/// configuration; deletion is asynchronous on the broker, so creation is retried until the name
/// is free.
pub fn recreate_topic(kafka: &mut KafkaClients, topic: &str, partitions: u32) {
    let old_id = topic_id(kafka, topic);
    kafka.delete_topic(topic).expect("delete topic");
    for _ in 0..100 {
        if kafka
            .create_topic(topic, partitions, 1, &configs(&SAFE))
            .is_ok_and(|created| created)
        {
            // Until then a loaded broker may still answer the old topic (same partitions).
            wait_for_new_id(kafka, topic, partitions, &old_id);
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("topic {topic} could not be created again");
}

/// Waits until `topic` is described with `partitions` partitions under an ID other than
/// `old_id`.
fn wait_for_new_id(kafka: &mut KafkaClients, topic: &str, partitions: u32, old_id: &str) {
    for _ in 0..100 {
        let described = kafka
            .describe_topics(&[topic.to_owned()])
            .expect("describe");
        if described[0]
            .as_ref()
            .is_some_and(|d| d.partitions.len() == partitions as usize && d.topic_id != old_id)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("topic {topic} did not appear under a new ID");
}

/// The `--json` document a run printed on stdout; a panic showing both streams if it is none.
pub fn json_doc(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e})\n--- stdout\n{}\n--- stderr\n{}",
            stdout(output),
            stderr(output)
        )
    })
}

/// The `builtin.features` librdkafka reports in `--version` (what the linked client can do).
pub fn builtin_features() -> Vec<String> {
    let output = cli(&["--version"]);
    expect_code(&output, 0);
    let text = stdout(&output);
    text.lines()
        .find_map(|line| line.strip_prefix("builtin.features:"))
        .unwrap_or_else(|| panic!("no builtin.features line in:\n{text}"))
        .trim()
        .split(',')
        .map(str::to_owned)
        .collect()
}

/// The `kind` of a `--json` error object on stdout ("" when there is none).
pub fn error_kind(output: &Output) -> String {
    serde_json::from_str::<serde_json::Value>(&stdout(output))
        .ok()
        .and_then(|v| v["error"]["kind"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Every partition's beginning (log start offset) of `topic`, as Kafka's own `GetOffsetShell`
/// (`--time -2`, a JVM with Kafka's Java client) reads it: a reader that shares no code with
/// the CLI under test. Ascending by partition.
pub fn beginnings_by_kafka(topic: &str) -> Vec<(u32, u64)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka");
    let paths = Command::new(script)
        .arg("classpath")
        .output()
        .expect("scripts/kafka runs");
    assert!(paths.status.success(), "scripts/kafka classpath failed");
    let paths = String::from_utf8(paths.stdout).expect("utf-8");
    let mut lines = paths.lines();
    let (classpath, log_config) = (
        lines.next().expect("classpath"),
        lines.next().expect("log4j"),
    );
    let output = Command::new("java")
        .arg(format!("-Dlog4j2.configurationFile={log_config}"))
        .args([
            "-Xmx256m",
            "-cp",
            classpath,
            "org.apache.kafka.tools.GetOffsetShell",
        ])
        .args([
            "--bootstrap-server",
            bootstrap(),
            "--topic",
            topic,
            "--time",
            "-2",
        ])
        .output()
        .expect("java runs");
    assert!(
        output.status.success(),
        "GetOffsetShell failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut offsets: Vec<(u32, u64)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            // topic:partition:offset, and the topic itself may hold ':' no more than ours does.
            let rest = line.strip_prefix(topic)?.strip_prefix(':')?;
            let (partition, offset) = rest.split_once(':')?;
            Some((partition.parse().ok()?, offset.trim().parse().ok()?))
        })
        .collect();
    offsets.sort_unstable();
    offsets
}

//! Fault injection as a decorator of the capabilities, switched on by the `ASC_FAILPOINT`
//! environment variable, so that end-to-end tests can break a real apply after its point of no
//! return. Only test builds (cargo feature `testing`) wrap their capabilities in it; without the
//! variable it changes nothing.
//!
//! - `delete-records`: the delete-records capability fails with a Kafka error once this instance
//!   has written a COMMITTED record (the permission probe before the commit still runs).
//! - `compact-after-commit`: right after COMMITTED is acknowledged, the data topic's
//!   `cleanup.policy` is changed to `compact` (as a careless operator might), so the re-check
//!   before delete refuses.
//! - `replay-stall`: the replay consumer's polls return nothing, as a broker that cannot serve
//!   the captured range would, so the guest's no-progress window must end the replay.
//!
//! `ASC_FAILPOINT_PAUSE=<stage>` with `ASC_FAILPOINT_PAUSE_FILE=<path>` stops an apply at a stage
//! (`before-commit`, `after-commit`, `after-delete`): the host creates `<path>.reached` and waits
//! (at most 120 s) until `<path>.go` exists, so a fault test can kill a broker at that moment.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use action_state_format::offsets::PartitionOffsets;
use action_state_kafka::capabilities::{
    self as caps, Capabilities, ErrorKind, KafkaError, KafkaResult, PolledBatch, TopicMetadata,
};
use action_state_kafka::kafka_types::{ClusterDescription, ConfigEntry, OffsetSpec};

use crate::kafka::capabilities::HeldRecords;
use crate::kafka::consumer::HeldRecord;
use crate::kafka::{KafkaClients, KafkaSettings};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failpoint {
    DeleteRecords,
    CompactAfterCommit,
    ReplayStall,
}

/// The failpoint this process runs with (`ASC_FAILPOINT`), read once.
fn active() -> Option<Failpoint> {
    static ACTIVE: OnceLock<Option<Failpoint>> = OnceLock::new();
    *ACTIVE.get_or_init(|| match std::env::var("ASC_FAILPOINT").as_deref() {
        Ok("delete-records") => Some(Failpoint::DeleteRecords),
        Ok("compact-after-commit") => Some(Failpoint::CompactAfterCommit),
        Ok("replay-stall") => Some(Failpoint::ReplayStall),
        _ => None,
    })
}

/// Where an apply can be paused for a fault test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    BeforeCommit,
    AfterCommit,
    AfterDelete,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::BeforeCommit => "before-commit",
            Stage::AfterCommit => "after-commit",
            Stage::AfterDelete => "after-delete",
        }
    }
}

/// Blocks at `stage` when a pause for it is configured; otherwise returns at once.
fn pause(stage: Stage) {
    static PAUSE: OnceLock<Option<(String, PathBuf)>> = OnceLock::new();
    let configured = PAUSE.get_or_init(|| {
        let stage = std::env::var("ASC_FAILPOINT_PAUSE").ok()?;
        let file = std::env::var_os("ASC_FAILPOINT_PAUSE_FILE")?;
        Some((stage, PathBuf::from(file)))
    });
    let Some((wanted, file)) = configured else {
        return;
    };
    if wanted != stage.name() {
        return;
    }
    let reached = file.with_extension("reached");
    let go = file.with_extension("go");
    let _ = std::fs::write(&reached, stage.name());
    let deadline = Instant::now() + Duration::from_secs(120);
    while !go.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether an appended control value is a COMMITTED record (the stages key on it).
fn is_commit(value: &str) -> bool {
    action_state_format::ControlRecord::parse_value(value)
        .is_ok_and(|r| r.status == action_state_format::Status::Committed)
}

/// `compact-after-commit`: the data topic named by the committed record becomes compact-only,
/// changed through clients of its own (as another operator's tool would).
fn compact_data_topic(settings: &KafkaSettings, value: &str) {
    let Ok(record) = action_state_format::ControlRecord::parse_value(value) else {
        return;
    };
    let policy = [
        ("cleanup.policy", "compact"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    if let Ok(mut kafka) = KafkaClients::new(settings.clone()) {
        let _ = kafka.alter_topic_configs(&record.plan.topic, &policy);
    }
}

/// `inner`, broken as `ASC_FAILPOINT` and `ASC_FAILPOINT_PAUSE` say (neither set: exactly
/// `inner`).
pub struct Failpoints<C> {
    inner: C,
    active: Option<Failpoint>,
    /// Whether a writer of this instance appended a COMMITTED record.
    committed: Arc<AtomicBool>,
    settings: KafkaSettings,
}

impl<C> Failpoints<C> {
    /// `settings` reach the cluster for `compact-after-commit`.
    pub fn from_env(inner: C, settings: &KafkaSettings) -> Self {
        Failpoints {
            inner,
            active: active(),
            committed: Arc::default(),
            settings: settings.clone(),
        }
    }

    fn committed(&self) -> bool {
        self.committed.load(Ordering::SeqCst)
    }
}

pub struct FailpointWriter<W> {
    inner: W,
    compact: Option<KafkaSettings>,
    committed: Arc<AtomicBool>,
}

impl<W: caps::Writer> caps::Writer for FailpointWriter<W> {
    fn append(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> KafkaResult<u64> {
        let commit = is_commit(value);
        if commit {
            pause(Stage::BeforeCommit);
        }
        let answer = self.inner.append(topic, partition, key, value);
        if commit && answer.is_ok() {
            self.committed.store(true, Ordering::SeqCst);
            pause(Stage::AfterCommit);
            if let Some(settings) = &self.compact {
                compact_data_topic(settings, value);
            }
        }
        answer
    }
}

pub struct FailpointConsumer<K> {
    inner: K,
    stall: bool,
    /// The latest poll stalled: it returned no records.
    stalled: bool,
}

impl<K: caps::Consumer> caps::Consumer for FailpointConsumer<K> {
    fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        self.inner.assign(start)
    }

    fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        self.inner.position()
    }

    fn poll(&mut self, max: u32, timeout_ms: u32, with_data: bool) -> KafkaResult<PolledBatch> {
        self.stalled = self.stall && !with_data;
        if self.stalled {
            std::thread::sleep(Duration::from_millis(u64::from(timeout_ms)));
            return Ok(PolledBatch::default());
        }
        self.inner.poll(max, timeout_ms, with_data)
    }
}

impl<K: HeldRecords> HeldRecords for FailpointConsumer<K> {
    fn held(&mut self, index: u32) -> Option<&mut HeldRecord> {
        if self.stalled {
            return None;
        }
        self.inner.held(index)
    }
}

impl<C: Capabilities> Capabilities for Failpoints<C> {
    type Writer = FailpointWriter<C::Writer>;
    type Consumer = FailpointConsumer<C::Consumer>;

    fn now_ms(&mut self) -> u64 {
        self.inner.now_ms()
    }

    fn sleep_ms(&mut self, ms: u32) {
        self.inner.sleep_ms(ms);
    }

    fn operation_timeout_ms(&mut self) -> u32 {
        self.inner.operation_timeout_ms()
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        self.inner.retrying(message, remaining_ms);
    }

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicMetadata>>> {
        self.inner.describe(topics, config_names, with_offsets)
    }

    fn describe_cluster(&mut self, config_names: &[&str]) -> KafkaResult<ClusterDescription> {
        self.inner.describe_cluster(config_names)
    }

    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        self.inner
            .create_topic(topic, partitions, replication_factor, configs)
    }

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        self.inner.list_offsets(topic, partitions, spec)
    }

    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        if self.active == Some(Failpoint::DeleteRecords) && self.committed() {
            return Err(KafkaError::new(
                ErrorKind::Other,
                "failpoint delete-records is active",
            ));
        }
        let answer = self.inner.delete_records(topic, before);
        if self.committed() {
            pause(Stage::AfterDelete);
        }
        answer
    }

    fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<Self::Writer> {
        Ok(FailpointWriter {
            inner: self.inner.open_writer(transactional_id)?,
            compact: (self.active == Some(Failpoint::CompactAfterCommit))
                .then(|| self.settings.clone()),
            committed: Arc::clone(&self.committed),
        })
    }

    fn open_consumer(&mut self, topic: &str) -> KafkaResult<Self::Consumer> {
        Ok(FailpointConsumer {
            inner: self.inner.open_consumer(topic)?,
            stall: self.active == Some(Failpoint::ReplayStall),
            stalled: false,
        })
    }
}

//! A runtime's recovery session (SPEC §6): fixed topic identity, validated restore, bounded
//! replay of exactly [requested, captured end), and checkpoint markers that stay correct while
//! the replay is still running.

use crate::recovery::{
    RecoveryCheck, RecoveryPolicy, RecoveryRefusal, check_decided_ranges, check_policies, decide,
    describe_inputs, detailed, replay_control, requested_ranges,
};
use action_state_format::control_history::ControlHistory;
use action_state_format::error::{CleanupError, Result};
use action_state_format::marker::{Marker, VersionedMarker};
use action_state_format::offsets::PartitionOffsets;
use action_state_format::planning::{merge_minimum, parse_markers};
use action_state_kafka::capabilities::Capabilities;
use action_state_kafka::kafka_types::{self, TopicDescription};
use action_state_kafka::policy::Policy;
use action_state_kafka::topics::check_identity;

/// What replay sees of a poll: partitions, offsets and flags, never a key or value text.
pub use action_state_kafka::capabilities::PolledBatch;
use action_state_kafka::capabilities::record_flags;
use action_state_kafka::policy::ReplayPoll;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOptions {
    pub poll_timeout_ms: u32,
    pub stall_timeout_ms: u32,
}

/// One record to replay: its index in the latest poll (the host holds its key and value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayedRecord {
    pub index: u32,
    pub partition: u32,
    pub offset: u64,
    /// `false` for a tombstone.
    pub has_value: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayBatch {
    pub records: Vec<ReplayedRecord>,
    pub done: bool,
    /// (partition, position, target) per partition of the restore.
    pub progress: Vec<(u32, u64, u64)>,
}

#[derive(Debug, Clone)]
struct Replay {
    /// The restored offsets: what a checkpoint taken during replay must carry.
    restored: PartitionOffsets,
    positions: PartitionOffsets,
    targets: PartitionOffsets,
    /// Partitions still below their target, in the consumer's assignment.
    active: Vec<u32>,
    options: ReplayOptions,
    stalled_ms: u64,
    /// Consecutive non-empty polls that moved no position.
    idle_polls: u32,
    /// Set when a batch failed: records it had already taken were never handed out, so the
    /// replay cannot continue; only a new restore can.
    failed: Option<String>,
}

/// Consecutive records of one partition in a poll (a client delivers them in such runs): the
/// partition's position and target while the run is checked, or `None` when the replay does
/// not read that partition.
struct Run {
    partition: u32,
    window: Option<(u64, u64)>,
}

#[derive(Debug, Clone)]
enum Phase {
    /// No restore yet: a checkpoint carries the live end offsets.
    Fresh,
    /// Restoring the state from `restored`; a checkpoint carries those offsets.
    Replaying(Replay),
    /// The last restore replayed everything it had to (or had nothing to replay): a checkpoint
    /// carries the live end offsets. Holds the final progress, for a runtime that asks again.
    Live(Vec<(u32, u64, u64)>),
    /// The last restore failed and no unfinished replay was left to keep: the state holds no
    /// known prefix of the topic, so no checkpoint may be taken until a restore completes.
    RestoreFailed(String),
}

/// The recovery of one data topic by one runtime instance.
#[derive(Debug, Clone)]
pub struct RecoverySession {
    topic: String,
    policy: RecoveryPolicy,
    /// The identity seen at start; the topic must keep it while the job runs.
    identity: TopicDescription,
    phase: Phase,
}

const WHILE_RUNNING: &str = "while the job was running";
/// Polls in a row that return records yet move no partition forward before the replay counts
/// as stalled (such polls return at once, so the stall timeout cannot measure them).
const MAX_IDLE_POLLS: u32 = 10_000;

impl RecoverySession {
    /// Starts a session for `topic`, fixing its identity.
    pub fn start<C: Capabilities>(
        kafka: &mut Policy<C>,
        topic: &str,
        policy: RecoveryPolicy,
    ) -> Result<Self> {
        check_policies(&policy)?;
        let identity = describe(kafka, topic)?.ok_or_else(|| {
            CleanupError::InvalidArgument(format!(
                "Kafka action-state topic {topic} does not exist"
            ))
        })?;
        Ok(RecoverySession {
            topic: topic.to_owned(),
            policy,
            identity,
            phase: Phase::Fresh,
        })
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The live topic must still have the identity it had when the session started.
    fn verify_identity<C: Capabilities>(&self, kafka: &mut Policy<C>) -> Result<TopicDescription> {
        let live = describe(kafka, &self.topic)?;
        check_identity(
            &self.topic,
            &self.identity.topic_id,
            &self.identity.partitions,
            live.as_ref(),
            WHILE_RUNNING,
        )?;
        Ok(self.identity.clone())
    }

    /// Validates a restore from `markers` and positions the consumer for replay. With nothing to
    /// replay the session is live at once.
    ///
    /// A failed restore never makes the session live. It keeps an unfinished replay's restored
    /// offsets for checkpoints only when it retried the same restore (the same requested
    /// offsets: the state in hand is still that replay's, partly replayed), and that replay
    /// cannot continue. In every other case (no unfinished replay, other markers, markers that
    /// could not be read) checkpoints are refused until a restore completes: the runtime may
    /// already hold the state of the other markers, which never replayed the unfinished
    /// replay's offsets.
    ///
    /// The replay reads with the policy's replay consumer of the topic, opened by the first
    /// restore (a consumer that cannot be opened fails the restore).
    pub fn restore<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
        markers: &[Marker],
        options: ReplayOptions,
    ) -> Result<RecoveryCheck> {
        let previous = std::mem::replace(&mut self.phase, Phase::Fresh);
        let result = kafka
            .open_replay(&self.topic)
            .map_err(CleanupError::Kafka)
            .and_then(|()| self.restore_once(kafka, markers, options, &mut None));
        self.settle(previous, result, Some(markers))
    }

    /// `restore` from marker texts as a runtime holds them: every failure, the markers' and
    /// the consumer's included, takes the same failure path as a failed restore.
    pub fn restore_texts<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
        texts: &[String],
        options: ReplayOptions,
    ) -> Result<RecoveryCheck> {
        self.restore_read(kafka, parse_markers(texts), options)
            .map_err(|refusal| refusal.error)
    }

    /// `restore` from markers as they were read (from texts, files or a snapshot), refused as
    /// `check_recovery_detailed` refuses: a boundary violation names every partition below the
    /// boundary and who committed it. Markers that could not be read fail the restore like any
    /// other failure. The consumer is opened first, whether the markers were read or not.
    pub fn restore_read<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
        markers: Result<Vec<Marker>>,
        options: ReplayOptions,
    ) -> std::result::Result<RecoveryCheck, Box<RecoveryRefusal>> {
        let previous = std::mem::replace(&mut self.phase, Phase::Fresh);
        let opened = kafka.open_replay(&self.topic).map_err(CleanupError::Kafka);
        let markers = match markers {
            Ok(markers) => markers,
            Err(error) => {
                self.fail(previous, &error, None);
                return Err(detailed(error, &[], None));
            }
        };
        let mut history = None;
        let result =
            opened.and_then(|()| self.restore_once(kafka, &markers, options, &mut history));
        self.settle(previous, result, Some(&markers))
            .map_err(|error| detailed(error, &markers, history.as_ref()))
    }

    /// The phase after a restore: live or replaying when it succeeded, else the failure rule of
    /// `restore` (`markers` is `None` when they could not be read).
    fn settle(
        &mut self,
        previous: Phase,
        result: Result<(Replay, RecoveryCheck)>,
        markers: Option<&[Marker]>,
    ) -> Result<RecoveryCheck> {
        match result {
            Ok((replay, check)) => {
                self.phase = if replay.active.is_empty() {
                    Phase::Live(replay.progress())
                } else {
                    Phase::Replaying(replay)
                };
                Ok(check)
            }
            Err(error) => {
                self.fail(previous, &error, markers);
                Err(error)
            }
        }
    }

    /// The failure rule of `restore`, after a restore failed with `error`.
    fn fail(&mut self, previous: Phase, error: &CleanupError, markers: Option<&[Marker]>) {
        let retried = |unfinished: &Replay| {
            markers.and_then(requested_offsets).as_ref() == Some(&unfinished.restored)
        };
        self.phase = match previous {
            Phase::Replaying(mut unfinished) if retried(&unfinished) => {
                unfinished.failed = Some(format!("a later restore failed: {error}"));
                Phase::Replaying(unfinished)
            }
            _ => Phase::RestoreFailed(error.to_string()),
        };
    }

    fn restore_once<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
        markers: &[Marker],
        options: ReplayOptions,
        history: &mut Option<ControlHistory>,
    ) -> Result<(Replay, RecoveryCheck)> {
        if options.poll_timeout_ms == 0 || options.stall_timeout_ms < options.poll_timeout_ms {
            return Err(CleanupError::InvalidArgument(format!(
                "Replay needs a poll timeout above 0 and a stall timeout of at least one poll, but got poll {} ms and stall {} ms",
                options.poll_timeout_ms, options.stall_timeout_ms
            )));
        }
        // The data topic with its ranges and the control topic in one request, then the
        // control log.
        let (live, control) = describe_inputs(kafka, &self.topic, &self.policy)?;
        check_identity(
            &self.topic,
            &self.identity.topic_id,
            &self.identity.partitions,
            live.as_ref().map(|l| &l.description),
            WHILE_RUNNING,
        )?;
        *history = replay_control(kafka, &self.policy, control)?;
        let decision = decide(markers, &self.policy, &self.identity, history.as_ref())?;
        let (beginnings, ends) = live
            .map(|live| requested_ranges(&live, &decision.requested))
            .unwrap_or_default();
        // Confirmed after the offsets that bound the replay were read (the topic may have been
        // recreated between the answer's metadata and its offsets, or while they were asked
        // again): the range and the records are the same physical topic's, before any record
        // is handed over.
        self.verify_identity(kafka)?;
        let ranges = check_decided_ranges(&decision, &self.policy, &beginnings, &ends)?;
        let replay = Replay {
            restored: decision.requested.clone(),
            positions: decision.requested.clone(),
            targets: ends,
            active: ranges
                .iter()
                .filter(|(_, requested, _, end)| requested < end)
                .map(|r| r.0)
                .collect(),
            options,
            stalled_ms: 0,
            idle_polls: 0,
            failed: None,
        };
        kafka.replay_assign(&replay.active_start())?;
        Ok((replay, RecoveryCheck { decision, ranges }))
    }

    /// The next records of the replay; loops over empty polls until records, the end, or a
    /// stall. Refuses undecodable records with their topic-partition and offset.
    ///
    /// Opens the policy's replay consumer first when no restore opened it (its failure is this
    /// call's).
    pub fn next_batch<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
        max_records: u32,
    ) -> Result<ReplayBatch> {
        kafka.open_replay(&self.topic)?;
        let result = self.next_batch_once(kafka, max_records);
        if let (Err(error), Phase::Replaying(replay)) = (&result, &mut self.phase) {
            replay.failed = Some(error.to_string());
        }
        result
    }

    fn next_batch_once<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
        max_records: u32,
    ) -> Result<ReplayBatch> {
        let topic = self.topic.clone();
        let replay = match &mut self.phase {
            Phase::Replaying(replay) => replay,
            Phase::Live(progress) => {
                return Ok(ReplayBatch {
                    records: Vec::new(),
                    done: true,
                    progress: progress.clone(),
                });
            }
            Phase::Fresh => {
                return Err(CleanupError::InvalidArgument(
                    "There is no replay in progress: call restore first".into(),
                ));
            }
            Phase::RestoreFailed(why) => {
                return Err(CleanupError::InvalidArgument(format!(
                    "The last restore of {topic} failed ({why}); restore again"
                )));
            }
        };
        if let Some(failure) = &replay.failed {
            return Err(CleanupError::InvalidArgument(format!(
                "The replay of {topic} failed earlier and cannot continue ({failure}); restore again"
            )));
        }
        loop {
            if replay.active.is_empty() {
                let progress = replay.progress();
                // Re-checked after replay: the records read were those of the same topic.
                self.verify_identity(kafka)?;
                self.phase = Phase::Live(progress.clone());
                return Ok(ReplayBatch {
                    records: Vec::new(),
                    done: true,
                    progress,
                });
            }
            let before = replay.positions.clone();
            let consumed =
                match kafka.replay_poll(max_records.max(1), replay.options.poll_timeout_ms)? {
                    ReplayPoll::Records(consumed) => consumed,
                    // The client's lookup of a group this consumer never uses (the policy waited a
                    // poll's time): poll again. Charged like an empty poll, so a host repeating it
                    // ends in a stall within the stall window, as a silent broker would.
                    ReplayPoll::GroupRefused => {
                        replay.stalled_ms += u64::from(replay.options.poll_timeout_ms);
                        if replay.stalled_ms >= u64::from(replay.options.stall_timeout_ms) {
                            return Err(replay.stalled(&topic));
                        }
                        continue;
                    }
                };
            let polled = consumed.len();
            let records = replay.accept_poll(&topic, &consumed)?;
            replay.advance_from(&kafka.replay_position()?);
            if replay.positions == before {
                // An empty poll waited its whole timeout; a poll that returned only records past
                // the targets (written after the capture) came back early, so it is counted,
                // not timed, and too many of them in a row are a stall as well.
                if polled == 0 {
                    replay.stalled_ms += u64::from(replay.options.poll_timeout_ms);
                } else {
                    replay.idle_polls += 1;
                }
                if replay.stalled_ms >= u64::from(replay.options.stall_timeout_ms)
                    || replay.idle_polls >= MAX_IDLE_POLLS
                {
                    return Err(replay.stalled(&topic));
                }
            } else {
                replay.stalled_ms = 0;
                replay.idle_polls = 0;
            }
            // Finished partitions stay assigned: re-assigning would make the consumer drop what
            // it prefetched for the others. Their later records are simply not accepted.
            replay
                .active
                .retain(|p| replay.positions.get(*p) < replay.targets.get(*p));
            if !records.is_empty() {
                return Ok(ReplayBatch {
                    records,
                    done: false,
                    progress: replay.progress(),
                });
            }
        }
    }

    /// The marker for a checkpoint taken now (restored offsets while replay is unfinished).
    pub fn snapshot_marker<C: Capabilities>(
        &mut self,
        kafka: &mut Policy<C>,
    ) -> Result<VersionedMarker> {
        let offsets = match &self.phase {
            Phase::Replaying(replay) => {
                let restored = replay.restored.clone();
                self.verify_identity(kafka)?;
                restored
            }
            Phase::RestoreFailed(why) => {
                let why = why.clone();
                self.verify_identity(kafka)?;
                return Err(CleanupError::RecoveryRefused(format!(
                    "The last restore of {} failed ({why}) and no restore has completed since, so the state holds no known position in the topic; a checkpoint now could skip records it never replayed: restore again",
                    self.topic
                )));
            }
            // One describe with offsets answers the identity and the end offsets together (the
            // policy refuses an answer whose ranges miss a partition it described).
            Phase::Fresh | Phase::Live(_) => {
                let live = kafka
                    .inspect_ranges(&[&self.topic], &[])?
                    .into_iter()
                    .next()
                    .flatten();
                check_identity(
                    &self.topic,
                    &self.identity.topic_id,
                    &self.identity.partitions,
                    live.as_ref().map(|s| &s.description),
                    WHILE_RUNNING,
                )?;
                let ranges = live.map(|s| s.ranges).unwrap_or_default();
                kafka_types::ends(&ranges)
            }
        };
        VersionedMarker::new(&self.topic, &self.identity.topic_id, offsets)
    }

    pub fn is_replaying(&self) -> bool {
        matches!(self.phase, Phase::Replaying(_))
    }
}

impl Replay {
    fn active_start(&self) -> PartitionOffsets {
        self.active
            .iter()
            .map(|p| (*p, self.positions.get(*p).unwrap_or(0)))
            .collect()
    }

    fn progress(&self) -> Vec<(u32, u64, u64)> {
        self.targets
            .iter()
            .map(|(p, target)| {
                (
                    p,
                    self.positions.get(p).unwrap_or(target).min(target),
                    target,
                )
            })
            .collect()
    }

    /// The records of one poll to replay, in poll order; positions move past them.
    ///
    /// Never inlined: this is the loop over every polled record, and inlined into the rest of
    /// `next_batch` it would sit in one large function. The JVM host compiles each guest
    /// function into one JVM method, and HotSpot leaves methods over 8,000 bytes of bytecode to
    /// its interpreter.
    #[inline(never)]
    fn accept_poll(&mut self, topic: &str, consumed: &PolledBatch) -> Result<Vec<ReplayedRecord>> {
        let mut records = Vec::with_capacity(consumed.len());
        let mut run: Option<Run> = None;
        for (index, (partition, offset, flags)) in consumed.rows().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            let current = match run.as_mut() {
                Some(current) if current.partition == partition => current,
                _ => {
                    self.end_run(run.take());
                    run.insert(self.start_run(partition))
                }
            };
            if let Some(replayed) = self.accept(topic, index, current, offset, flags)? {
                records.push(replayed);
            }
        }
        self.end_run(run);
        Ok(records)
    }

    /// A run of records of `partition` begins: its position and target are read once.
    fn start_run(&self, partition: u32) -> Run {
        Run {
            partition,
            window: self
                .positions
                .get(partition)
                .zip(self.targets.get(partition)),
        }
    }

    /// A run ended: its partition's position is what the run advanced it to.
    fn end_run(&mut self, run: Option<Run>) {
        if let Some(Run {
            partition,
            window: Some((position, _)),
        }) = run
        {
            self.positions.insert(partition, position);
        }
    }

    /// Keeps a record of an active partition inside [position, target); refuses one that cannot
    /// be decoded.
    fn accept(
        &mut self,
        topic: &str,
        index: u32,
        run: &mut Run,
        offset: u64,
        flags: u8,
    ) -> Result<Option<ReplayedRecord>> {
        let partition = run.partition;
        let Some((position, target)) = run.window else {
            return Ok(None);
        };
        // A finished partition's position equals its target, so this drops its late records too.
        if offset < position || offset >= target {
            return Ok(None);
        }
        let invalid = |why: &str| {
            CleanupError::ReplayRecordInvalid(format!(
                "Action-state record {topic}-{partition} at offset {offset} {why}"
            ))
        };
        if flags & record_flags::UTF8 == 0 {
            return Err(invalid(
                "cannot be decoded: its key or value is not valid UTF-8",
            ));
        }
        if flags & record_flags::HAS_KEY == 0 {
            return Err(invalid("has no key"));
        }
        run.window = Some((offset + 1, target));
        Ok(Some(ReplayedRecord {
            index,
            partition,
            offset,
            has_value: flags & record_flags::HAS_VALUE != 0,
        }))
    }

    /// Positions move past offsets that deliver nothing (compaction, transaction markers).
    fn advance_from(&mut self, consumer: &PartitionOffsets) {
        for &partition in &self.active {
            if let (Some(at), Some(current), Some(target)) = (
                consumer.get(partition),
                self.positions.get(partition),
                self.targets.get(partition),
            ) {
                self.positions
                    .insert(partition, current.max(at.min(target)));
            }
        }
    }

    fn stalled(&self, topic: &str) -> CleanupError {
        let positions: PartitionOffsets = self
            .active
            .iter()
            .filter_map(|p| self.positions.get(*p).map(|o| (*p, o)))
            .collect();
        let targets: PartitionOffsets = self
            .active
            .iter()
            .filter_map(|p| self.targets.get(*p).map(|o| (*p, o)))
            .collect();
        CleanupError::ReplayStalled(format!(
            "Kafka action-state replay of {topic} made no progress for {} ms; current positions are {positions} and target end offsets are {targets}",
            self.stalled_ms
        ))
    }
}

/// The offsets a restore from `markers` asks for: per partition the minimum over all markers.
fn requested_offsets(markers: &[Marker]) -> Option<PartitionOffsets> {
    let (first, rest) = markers.split_first()?;
    let mut requested = first.offsets().clone();
    for marker in rest {
        merge_minimum(&mut requested, marker.offsets());
    }
    Some(requested)
}

fn describe<C: Capabilities>(
    kafka: &mut Policy<C>,
    topic: &str,
) -> Result<Option<TopicDescription>> {
    Ok(kafka
        .describe_topics(&[topic])?
        .into_iter()
        .next()
        .flatten())
}

//! The control topic as the policy writes and reads it: the transactional writer that fences
//! earlier ones, the idempotent writer for records that need no fence, waiting until an appended
//! record is stable, and the read loop with strict decoding of control records.

use super::{Deadline, FIRST_BACKOFF_MS, Policy, STABLE_FIRST_BACKOFF_MS, contract, failure};
use crate::capabilities::{Capabilities, ErrorKind, Kafka, PolledRecord};
use crate::kafka_types::{AppendError, OffsetSpec, PolicyResult};
use action_state_format::control::ControlEntry;
use action_state_format::error::{CleanupError, KafkaFailure, Result};
use action_state_format::offsets::PartitionOffsets;

/// The transactional id of a control topic's writer: one per control topic, the same in every
/// host and every earlier version, so that any two writers of one control topic fence each other.
pub fn transactional_id(control_topic: &str) -> String {
    format!("action-state-cleanup:{control_topic}")
}

/// How long one poll of the control topic waits for records.
const CONTROL_POLL_MS: u32 = 100;
const CONTROL_POLL_RECORDS: u32 = 500;

/// How much longer than the operation timeout an append step (the append and the wait until
/// readers see it) may take, per KiB of its record: a wide plan's control record holds every
/// partition's offset (about 120 KiB at 10,000 partitions).
pub const APPEND_MS_PER_KIB: u64 = 50;

pub(super) struct ControlWriter<W> {
    topic: String,
    writer: W,
    /// This writer can never append again: a newer writer took over, or a transaction of it
    /// failed in a way only a new writer settles.
    fenced: bool,
}

impl<C: Capabilities> Policy<C> {
    /// Reads every record of the single-partition control topic, from its beginning to the end
    /// offset captured when the read started. Records that are not text are corruption.
    pub fn read_control_log(&mut self, topic: &str) -> Result<Vec<ControlEntry>> {
        let (beginning, end) = self.control_range(topic)?;
        self.read_control_range(topic, beginning, end)
    }

    /// Reads the records of the single-partition control topic in [`beginning`, `end`): the
    /// range a describe of the control topic answered (`inspect_ranges`), so a reader that
    /// needs no fence before it reads makes no second request for it.
    pub fn read_control_range(
        &mut self,
        topic: &str,
        beginning: u64,
        end: u64,
    ) -> Result<Vec<ControlEntry>> {
        let mut entries = Vec::new();
        if end <= beginning {
            return Ok(entries);
        }
        let op = "read-control-log";
        if self.control_reader.as_ref().is_none_or(|(t, _)| t != topic) {
            let consumer = self.retry(op, &format!("opening a consumer of {topic}"), |c| {
                c.open_consumer(topic)
            })?;
            self.control_reader = Some((topic.to_owned(), consumer));
        }
        let Policy {
            caps,
            control_reader,
            ..
        } = self;
        let Some((_, reader)) = control_reader.as_mut() else {
            return Err(KafkaFailure::new(op, "no control-topic consumer", false).into());
        };
        let start: PartitionOffsets = [(0, beginning)].into_iter().collect();
        let mut deadline = Deadline::start(caps);
        let mut assigned = false;
        let mut position = beginning;
        while position < end {
            if deadline.passed(caps) {
                return Err(KafkaFailure::new(
                    op,
                    format!(
                        "Reading control topic {topic} timed out at offset {position} of {end}"
                    ),
                    true,
                )
                .into());
            }
            if !assigned {
                match caps.assign(reader, &start) {
                    Ok(()) => assigned = true,
                    Err(e) if e.kind.is_transient() => {
                        deadline.wait(caps);
                        continue;
                    }
                    Err(e) => return Err(failure(op, &format!("reading {topic}"), e).into()),
                }
            }
            match caps.poll(reader, CONTROL_POLL_RECORDS, CONTROL_POLL_MS, true) {
                Ok(records) => {
                    for record in records.into_records() {
                        if record.partition != 0 || record.offset < position {
                            continue;
                        }
                        position = record.offset + 1;
                        if record.offset < end {
                            entries.push(control_entry(topic, record)?);
                        }
                    }
                }
                // A broker died or a leader moved: the client reconnects; keep reading until
                // the deadline.
                Err(e) if e.kind.is_transient() => {
                    deadline.wait(caps);
                }
                // The client's lookup of a group this reader never uses: read on, after the
                // back-off, so that a host repeating it cannot make this a busy loop.
                Err(e) if e.is_unused_group_refusal() => {
                    deadline.wait(caps);
                }
                Err(e) => return Err(failure(op, &format!("reading {topic}"), e).into()),
            }
            // Transaction markers occupy offsets but are never delivered: trust the consumer's
            // position once it fetched past them.
            if let Ok(positions) = caps.position(reader)
                && let Some(next) = positions.get(0)
            {
                position = position.max(next);
            }
        }
        Ok(entries)
    }

    /// Becomes the only writer of the control topic, fencing earlier writers.
    pub fn fence_control(&mut self, topic: &str) -> PolicyResult<()> {
        self.control_writer = None;
        let id = transactional_id(topic);
        let writer = self.retry(
            "fence-control",
            &format!("initialising the transactional producer {id}"),
            |c| c.open_writer(Some(&id)),
        )?;
        self.control_writer = Some(ControlWriter {
            topic: topic.to_owned(),
            writer,
            fenced: false,
        });
        Ok(())
    }

    /// Appends one record durably; with `fenced`, in a transaction of the writer `fence_control`
    /// created (failing with `AppendError::Fenced` if a newer writer fenced it). Returns its offset.
    pub fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> std::result::Result<u64, AppendError> {
        let usable = self
            .control_writer
            .as_mut()
            .filter(|w| w.topic == topic && !w.fenced);
        let Some(writer) = usable else {
            if fenced {
                return Err(AppendError::Fenced(format!(
                    "this run holds no transactional writer of control topic {topic}"
                )));
            }
            return self.stable_plain_append(topic, key, value);
        };
        match self.caps.append(&mut writer.writer, topic, 0, key, value) {
            Ok(offset) => {
                self.await_stable(topic, offset, value.len())
                    .map_err(AppendError::Failed)?;
                Ok(offset)
            }
            Err(error) if error.kind == ErrorKind::Fenced => {
                writer.fenced = true;
                if fenced {
                    return Err(AppendError::Fenced(error.to_string()));
                }
                // Records that need no fencing are still written, by an idempotent producer.
                self.control_writer = None;
                self.stable_plain_append(topic, key, value)
            }
            // A record that needs no fence (APPLIED) is not lost with the transaction's answer,
            // whatever went wrong with it: the idempotent writer writes it, retrying until the
            // deadline (a duplicate of a transaction that did commit is harmless), and its own
            // error is the one reported. A transactional writer that failed this way is not
            // used again: its transaction may be left in a state only a new writer settles
            // (a broker has answered EndTxn with UNKNOWN_SERVER_ERROR when a concurrent apply's
            // fencing raced the commit).
            // The failed writer is dropped first (its open transaction must not hold back what
            // read_committed readers see), and the record is waited for like any other, so
            // that a `status` after this apply shows it.
            Err(_) if !fenced => {
                self.control_writer = None;
                self.stable_plain_append(topic, key, value)
            }
            Err(error) => Err(AppendError::Failed(failure(
                "append-control",
                &format!("appending to control topic {topic}"),
                error,
            ))),
        }
    }

    /// Waits until read_committed readers see `offset` of partition 0 (the transaction marker
    /// follows the commit), so every later read sees the record.
    fn await_stable(&mut self, topic: &str, offset: u64, bytes: usize) -> PolicyResult<()> {
        let extra = append_allowance(bytes);
        let mut deadline = Deadline::start_wide(&mut self.caps, STABLE_FIRST_BACKOFF_MS, extra);
        let what = format!("waiting for offset {offset} of {topic} to become visible");
        loop {
            let answer = self.retry_partitions("append-control", &what, topic, |c| {
                c.list_offsets(topic, &[0], OffsetSpec::Latest)
            })?;
            if answer.iter().any(|(p, end)| *p == 0 && *end > offset) {
                return Ok(());
            }
            if !deadline.wait(&mut self.caps) {
                return Err(KafkaFailure::new(
                    "append-control",
                    format!(
                        "the record at offset {offset} of control topic {topic} was committed but did not become visible in time"
                    ),
                    true,
                ));
            }
        }
    }

    /// Appends with the idempotent writer. A transient failure (the partition's leader died or
    /// moved, the request timed out) is retried with a new writer until the deadline: the
    /// record may already be in the log, and a second copy is harmless because APPLIED records
    /// restate a status (SPEC §7 accepts APPLIED after APPLIED).
    fn plain_append(&mut self, topic: &str, key: &str, value: &str) -> PolicyResult<u64> {
        let extra = append_allowance(value.len());
        let mut deadline = Deadline::start_wide(&mut self.caps, FIRST_BACKOFF_MS, extra);
        loop {
            if self.plain_writer.is_none() {
                let writer =
                    self.retry("append-control", "opening an idempotent producer", |c| {
                        c.open_writer(None)
                    })?;
                self.plain_writer = Some(writer);
            }
            let writer = self.plain_writer.as_mut().ok_or_else(|| {
                KafkaFailure::new("append-control", "no idempotent producer", false)
            })?;
            match self.caps.append(writer, topic, 0, key, value) {
                Ok(offset) => return Ok(offset),
                Err(error) if error.kind.is_transient() && deadline.wait(&mut self.caps) => {
                    // A producer whose request timed out may still hold the dead leader.
                    self.plain_writer = None;
                }
                Err(error) => {
                    self.plain_writer = None;
                    return Err(failure(
                        "append-control",
                        &format!("appending to {topic}"),
                        error,
                    ));
                }
            }
        }
    }

    /// `plain_append`, returning once read_committed readers see the record.
    fn stable_plain_append(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
    ) -> std::result::Result<u64, AppendError> {
        let offset = self
            .plain_append(topic, key, value)
            .map_err(AppendError::Failed)?;
        self.await_stable(topic, offset, value.len())
            .map_err(AppendError::Failed)?;
        Ok(offset)
    }

    /// Partition 0's beginning and end of the control topic, from one describe (its range
    /// comes with the partitions); a missing answer is refused. A topic this run saw or made
    /// that a broker does not know yet is asked for again until the deadline.
    fn control_range(&mut self, topic: &str) -> PolicyResult<(u64, u64)> {
        let mut deadline = Deadline::start(&mut self.caps);
        loop {
            let found = self
                .describe_known(&[topic], &[], true)?
                .into_iter()
                .next()
                .flatten();
            let Some(meta) = found else {
                let exists = self.seen.iter().chain(&self.known).any(|t| t == topic);
                if exists && deadline.wait(&mut self.caps) {
                    continue;
                }
                return Err(KafkaFailure::new(
                    "read-control-log",
                    format!(
                        "Kafka cleanup control topic {topic} does not exist; its history cannot be read"
                    ),
                    exists,
                ));
            };
            return meta
                .offsets
                .iter()
                .find(|r| r.partition == 0)
                .map(|r| (r.beginning, r.end))
                .ok_or_else(|| {
                    KafkaFailure::new(
                        "read-control-log",
                        format!(
                            "Kafka did not return the offsets of partition 0 of control topic {topic}; its history cannot be read"
                        ),
                        true,
                    )
                });
        }
    }
}

/// The allowance of an append of `bytes` bytes beyond the operation timeout.
fn append_allowance(bytes: usize) -> u64 {
    (bytes as u64 / 1024).saturating_mul(APPEND_MS_PER_KIB)
}

/// A control record's bytes that are not text are corruption (SPEC §7), never decoded lossily.
fn control_entry(topic: &str, record: PolledRecord) -> Result<ControlEntry> {
    if !record.utf8 {
        return Err(CleanupError::ControlTopicCorrupt(format!(
            "Cleanup control record at offset {} of {topic} is not valid UTF-8",
            record.offset
        )));
    }
    let key = record.key.filter(|_| record.has_key);
    let value = record.value.filter(|_| record.has_value);
    if (record.has_key && key.is_none()) || (record.has_value && value.is_none()) {
        return Err(CleanupError::Kafka(contract(
            "read-control-log",
            format!("record at offset {} came without its data", record.offset),
        )));
    }
    Ok(ControlEntry {
        offset: record.offset,
        key,
        value,
        timestamp: record.timestamp,
    })
}

//! The replay of a control-topic log with every integrity rule of SPEC §7. Above `parse`, whose
//! `ControlRecord::parse_value` reads each record.

use crate::boundary::{advances_or_equals, effective_boundary};
use crate::control::{ControlEntry, ControlRecord, Status};
use crate::error::{CleanupError, Result, TopicChange};
use crate::json::excerpt;
use crate::offsets::{PartitionOffsets, brief_partitions, partition_difference};
use crate::plan::Plan;

/// The known operations of a control topic, in first-seen order, each with its latest status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlHistory {
    operations: Vec<ControlRecord>,
    /// One per operation, in the same order.
    times: Vec<PlanTimes>,
}

/// When a plan became COMMITTED and APPLIED: the Kafka timestamps (ms since the Unix epoch) of
/// the first control record with each status. Absent when the record carried none, or when
/// compaction kept only the plan's newest record (its key is the plan ID).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanTimes {
    pub committed_at: Option<i64>,
    pub applied_at: Option<i64>,
}

impl PlanTimes {
    /// Records `at` as the time of `status` unless an earlier record of it was seen.
    fn observe(&mut self, status: Status, at: Option<i64>) {
        let slot = match status {
            Status::Committed => &mut self.committed_at,
            Status::Applied => &mut self.applied_at,
        };
        if slot.is_none() {
            *slot = at;
        }
    }
}

impl ControlHistory {
    /// Replays a whole control-topic log; the first broken rule stops with an error naming the
    /// record's offset, and nothing after it is trusted.
    pub fn replay(entries: &[ControlEntry]) -> Result<ControlHistory> {
        let mut history = ControlHistory::default();
        for entry in entries {
            history.observe(entry)?;
        }
        Ok(history)
    }

    /// Applies one record atomically: on error the history is unchanged (SPEC §7).
    pub fn observe(&mut self, entry: &ControlEntry) -> Result<()> {
        let corrupt = |why: String| {
            CleanupError::ControlTopicCorrupt(format!(
                "Cleanup control record at offset {} {why}",
                entry.offset
            ))
        };
        let Some(key) = &entry.key else {
            return Err(corrupt("has no plan ID key".into()));
        };
        // The key is input: messages show it escaped and short (a real plan ID is 64 hex digits).
        let shown = if key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()) {
            key.clone()
        } else {
            excerpt(key)
        };
        let Some(value) = &entry.value else {
            return Err(corrupt(format!(
                "is a tombstone for plan {shown}; cleanup boundaries cannot be deleted"
            )));
        };
        let record = ControlRecord::parse_value(value)
            .map_err(|why| corrupt(format!("(key {shown}) is invalid: {why}")))?;
        if *key != record.plan.plan_id {
            return Err(corrupt(format!(
                "has key {shown}, which does not match its plan ID {}",
                record.plan.plan_id
            )));
        }
        let Some(index) = self
            .operations
            .iter()
            .position(|op| op.plan.plan_id == *key)
        else {
            let mut times = PlanTimes::default();
            times.observe(record.status, entry.timestamp);
            self.operations.push(record);
            self.times.push(times);
            return Ok(());
        };
        let known = &mut self.operations[index];
        if known.plan != record.plan {
            return Err(corrupt(format!("changed immutable plan {key}")));
        }
        if known.status == Status::Applied && record.status == Status::Committed {
            return Err(corrupt(format!(
                "regressed applied plan {key} to COMMITTED"
            )));
        }
        known.status = record.status;
        self.times[index].observe(record.status, entry.timestamp);
        Ok(())
    }

    pub fn operations(&self) -> &[ControlRecord] {
        &self.operations
    }

    /// When each operation was COMMITTED and APPLIED, in the order of `operations`.
    pub fn times(&self) -> &[PlanTimes] {
        &self.times
    }

    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    pub fn find(&self, plan_id: &str) -> Option<&ControlRecord> {
        self.operations.iter().find(|op| op.plan.plan_id == plan_id)
    }

    /// The effective boundary over every known plan, COMMITTED and APPLIED alike.
    pub fn boundary(&self) -> PartitionOffsets {
        effective_boundary(self.operations.iter().map(|op| &op.plan.offsets))
    }

    /// The control topic is dedicated to one job: every plan must name `topic`/`topic_id` and
    /// the same partition set, and all plans must form a chain (pairwise comparable).
    pub fn check_dedicated(&self, topic: &str, topic_id: &str, partitions: &[u32]) -> Result<()> {
        let corrupt = CleanupError::ControlTopicCorrupt;
        for op in &self.operations {
            let plan = &op.plan;
            if plan.topic == topic && plan.topic_id != topic_id {
                // Same name, another physical topic: the data topic was recreated since this
                // control topic's plans were committed.
                return Err(CleanupError::TopicChanged(Box::new(TopicChange {
                    topic: topic.to_owned(),
                    context: format!(
                        "the topic was recreated after control topic plan {} was committed",
                        plan.plan_id
                    ),
                    expected_topic_id: plan.topic_id.clone(),
                    found_topic_id: topic_id.to_owned(),
                    expected_partitions: plan.offsets.partitions(),
                    found_partitions: partitions.to_vec(),
                })));
            }
            if plan.topic != topic || plan.topic_id != topic_id {
                return Err(corrupt(format!(
                    "Cleanup control topic is not dedicated to one Kafka action-state history: plan {} is for topic {} (ID {}), not {} (ID {})",
                    plan.plan_id, plan.topic, plan.topic_id, topic, topic_id
                )));
            }
            if !plan.offsets.has_partitions(partitions) {
                return Err(corrupt(format!(
                    "Cleanup control topic contains incompatible Kafka partition sets: plan {} covers {} but topic {} has {}{}",
                    plan.plan_id,
                    brief_partitions(&plan.offsets.partitions()),
                    topic,
                    brief_partitions(partitions),
                    partition_difference(&plan.offsets.partitions(), partitions)
                )));
            }
        }
        self.check_chain()
    }

    /// Pairwise comparability in O(n log n): sorted by total offset, a chain must advance at
    /// every step, and a step that does not is itself an incomparable pair.
    fn check_chain(&self) -> Result<()> {
        let mut plans: Vec<&Plan> = self.operations.iter().map(|op| &op.plan).collect();
        plans.sort_by_key(|plan| {
            plan.offsets
                .iter()
                .map(|(_, o)| u128::from(o))
                .sum::<u128>()
        });
        for pair in plans.windows(2) {
            if !advances_or_equals(&pair[1].offsets, &pair[0].offsets) {
                return Err(CleanupError::ControlTopicCorrupt(format!(
                    "Cleanup control topic contains incomparable boundaries {} {} and {} {}",
                    pair[0].plan_id,
                    pair[0].offsets.brief(),
                    pair[1].plan_id,
                    pair[1].offsets.brief()
                )));
            }
        }
        Ok(())
    }
}

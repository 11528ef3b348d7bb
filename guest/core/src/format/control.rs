//! Control records and the replay of a control-topic log with every integrity rule of SPEC §7.

use crate::boundary::{advances_or_equals, effective_boundary};
use crate::error::{CleanupError, Result, TopicChange};
use crate::fields::Fields;
use crate::json::{self, Value, excerpt};
use crate::offsets::{PartitionOffsets, brief_partitions, partition_difference};
use crate::plan::{Plan, PlanFields};

pub const CONTROL_SCHEMA_VERSION: u32 = 1;
const SUBJECT: &str = "Cleanup control record";
const FIELDS: [&str; 3] = ["schemaVersion", "status", "plan"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The boundary is durable and binding; deletion may not have happened yet.
    Committed,
    /// Kafka confirmed every partition begins at or after the boundary.
    Applied,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Committed => "COMMITTED",
            Status::Applied => "APPLIED",
        }
    }
}

/// The value of one control-topic record; its key is always `plan.plan_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlRecord {
    pub status: Status,
    pub plan: Plan,
}

impl ControlRecord {
    /// The reference path of `parse_value`: the whole document read into a JSON tree, then its
    /// fields checked. It decides every refusal and its message; `parse_value` only takes a
    /// faster way to the same answer when it can (see `decode`).
    pub fn parse_value_tree(text: &str) -> Result<ControlRecord, String> {
        let value =
            json::parse(text).map_err(|e| format!("it is not one valid JSON document: {e}"))?;
        ControlRecord::from_value(&value)
    }

    /// Reads a record value already parsed as JSON (the reference path of `parse_value`).
    pub fn from_value(value: &Value) -> Result<ControlRecord, String> {
        let fields = Fields::exactly(SUBJECT, value, &FIELDS)?;
        let schema = fields.get("schemaVersion");
        if schema.as_i64() != Some(i64::from(CONTROL_SCHEMA_VERSION)) {
            return Err(format!(
                "Unsupported cleanup control record schema {schema}"
            ));
        }
        let status = match fields.get("status") {
            Value::String(s) if s == "COMMITTED" => Status::Committed,
            Value::String(s) if s == "APPLIED" => Status::Applied,
            Value::String(s) => {
                return Err(format!(
                    "Cleanup control record status must be COMMITTED or APPLIED, but was {}",
                    excerpt(s)
                ));
            }
            other => {
                return Err(format!(
                    "Cleanup control record status must be a string, but was {}",
                    other.kind()
                ));
            }
        };
        let plan = Plan::from_value(fields.get("plan"))?.map_err(|e| e.to_string())?;
        Ok(ControlRecord { status, plan })
    }

    /// The compact JSON value written to the control topic.
    pub fn render(&self) -> String {
        render_value(self.status, &self.plan)
    }
}

/// The compact JSON value of a control record, for a plan's fields as given (a pure writer: it
/// does not check them; only a checked [`ControlRecord`] is ever appended).
pub fn render_value(status: Status, plan: &PlanFields) -> String {
    let mut out = String::with_capacity(220 + plan.offsets.len() * 16);
    out.push_str("{\"schemaVersion\":1,\"status\":\"");
    out.push_str(status.as_str());
    out.push_str("\",\"plan\":");
    plan.write_compact(&mut out);
    out.push('}');
    out
}

/// One record read from the control topic, exactly as Kafka returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlEntry {
    pub offset: u64,
    pub key: Option<String>,
    pub value: Option<String>,
}

/// The known operations of a control topic, in first-seen order, each with its latest status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlHistory {
    operations: Vec<ControlRecord>,
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
        match self
            .operations
            .iter_mut()
            .find(|op| op.plan.plan_id == *key)
        {
            Some(known) if known.plan != record.plan => {
                Err(corrupt(format!("changed immutable plan {key}")))
            }
            Some(known)
                if known.status == Status::Applied && record.status == Status::Committed =>
            {
                Err(corrupt(format!(
                    "regressed applied plan {key} to COMMITTED"
                )))
            }
            Some(known) => {
                known.status = record.status;
                Ok(())
            }
            None => {
                self.operations.push(record);
                Ok(())
            }
        }
    }

    pub fn operations(&self) -> &[ControlRecord] {
        &self.operations
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(a: u64, b: u64) -> Plan {
        Plan::new(
            "rp",
            "action-state",
            "topic-id",
            [(0, a), (1, b)].into_iter().collect(),
        )
        .unwrap()
    }

    fn entry(offset: u64, status: Status, plan: &Plan) -> ControlEntry {
        let record = ControlRecord {
            status,
            plan: plan.clone(),
        };
        ControlEntry {
            offset,
            key: Some(plan.plan_id.clone()),
            value: Some(record.render()),
        }
    }

    #[test]
    fn record_round_trips_in_compact_form() {
        let p = plan(10, 20);
        let record = ControlRecord {
            status: Status::Committed,
            plan: p.clone(),
        };
        let text = record.render();
        assert!(text.starts_with(
            "{\"schemaVersion\":1,\"status\":\"COMMITTED\",\"plan\":{\"schemaVersion\":1,"
        ));
        assert_eq!(ControlRecord::parse_value(&text), Ok(record));
    }

    #[test]
    fn tombstone_is_refused_without_rolling_back_boundary() {
        let p = plan(10, 20);
        let mut history = ControlHistory::replay(&[entry(0, Status::Committed, &p)]).unwrap();
        let tombstone = ControlEntry {
            offset: 1,
            key: Some(p.plan_id.clone()),
            value: None,
        };
        let error = history.observe(&tombstone).unwrap_err().to_string();
        assert!(
            error.contains("cleanup boundaries cannot be deleted"),
            "{error}"
        );
        assert_eq!(history.boundary(), p.offsets);
    }

    #[test]
    fn status_regression_is_refused_and_status_kept() {
        let p = plan(10, 20);
        let mut history = ControlHistory::replay(&[entry(0, Status::Applied, &p)]).unwrap();
        let error = history
            .observe(&entry(1, Status::Committed, &p))
            .unwrap_err()
            .to_string();
        assert!(error.contains("regressed applied plan"), "{error}");
        assert_eq!(history.find(&p.plan_id).unwrap().status, Status::Applied);
    }

    #[test]
    fn changed_plan_under_known_id_and_wrong_key_are_refused() {
        let p = plan(10, 20);
        let mut history = ControlHistory::replay(&[entry(0, Status::Committed, &p)]).unwrap();
        let other = plan(11, 20);
        let forged = ControlEntry {
            offset: 1,
            key: Some(p.plan_id.clone()),
            value: entry(1, Status::Committed, &other).value,
        };
        assert!(
            history
                .observe(&forged)
                .unwrap_err()
                .to_string()
                .contains("does not match its plan ID")
        );
        let unknown_status = ControlEntry {
            offset: 2,
            key: Some(p.plan_id.clone()),
            value: Some(
                ControlRecord {
                    status: Status::Committed,
                    plan: p.clone(),
                }
                .render()
                .replace("COMMITTED", "DELETED"),
            ),
        };
        assert!(
            history
                .observe(&unknown_status)
                .unwrap_err()
                .to_string()
                .contains("COMMITTED or APPLIED")
        );
        let fractional = ControlEntry {
            offset: 3,
            key: Some(p.plan_id.clone()),
            value: entry(3, Status::Committed, &p).value.map(|v| {
                v.replace(
                    "\"schemaVersion\":1,\"status\"",
                    "\"schemaVersion\":1.5,\"status\"",
                )
            }),
        };
        assert!(
            history
                .observe(&fractional)
                .unwrap_err()
                .to_string()
                .contains("Unsupported cleanup control record schema 1.5")
        );
        assert_eq!(history.operations().len(), 1);
    }

    #[test]
    fn incomparable_boundaries_and_foreign_topics_are_refused() {
        let history = ControlHistory::replay(&[
            entry(0, Status::Committed, &plan(10, 30)),
            entry(1, Status::Committed, &plan(20, 20)),
        ])
        .unwrap();
        let error = history
            .check_dedicated("action-state", "topic-id", &[0, 1])
            .unwrap_err()
            .to_string();
        assert!(error.contains("incomparable boundaries"), "{error}");
        let chain = ControlHistory::replay(&[
            entry(0, Status::Applied, &plan(10, 20)),
            entry(1, Status::Committed, &plan(15, 25)),
        ])
        .unwrap();
        assert_eq!(
            chain.check_dedicated("action-state", "topic-id", &[0, 1]),
            Ok(())
        );
        assert!(
            chain
                .check_dedicated("action-state", "recreated", &[0, 1])
                .is_err()
        );
        assert!(
            chain
                .check_dedicated("action-state", "topic-id", &[0, 1, 2])
                .is_err()
        );
        assert_eq!(chain.boundary().to_string(), "{0=15, 1=25}");
    }
}

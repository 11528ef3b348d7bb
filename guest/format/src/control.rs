//! Control records: their values and the control topic's entries (the replay of a log is in
//! `control_history`).

use crate::error::Result;
use crate::fields::Fields;
use crate::json::{self, Value, excerpt};
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
    /// The record's Kafka timestamp (ms since the Unix epoch), when the reader had one.
    pub timestamp: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control_history::ControlHistory;

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
            timestamp: None,
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
            timestamp: None,
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
            timestamp: None,
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
            timestamp: None,
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
            timestamp: None,
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

//! The parse entry points of the three documents: the fast decoder (`decode`) first, the
//! reference reader of each type (`parse_tree`, `parse_value_tree`) for everything it leaves.
//! They live here, above both, so the types never import the decoder that builds them.

use crate::control::ControlRecord;
use crate::decode;
use crate::error::Result;
use crate::marker::Marker;
use crate::plan::{ListedPlan, Plan};

impl Marker {
    /// Parses one marker strictly. An object with `schemaVersion` is versioned; an object whose
    /// keys are all partition numbers is legacy; anything else is refused.
    pub fn parse(text: &str) -> Result<Marker> {
        // The common case decodes straight into the marker; the reference reader decides the rest.
        if let Some(marker) = decode::marker(text) {
            return Ok(marker);
        }
        Marker::parse_tree(text)
    }
}

impl Plan {
    /// Parses one plan document strictly and verifies its ID (SPEC §2).
    pub fn parse(text: &str) -> Result<Plan> {
        // The common case decodes straight into the plan; the reference reader decides the rest.
        if let Some(plan) = decode::plan(text) {
            return Ok(plan);
        }
        Plan::parse_tree(text)
    }

    /// [`Plan::parse`], with the offsets as a list: the same plans accepted with the same
    /// values, the same refusals with the same messages.
    pub fn parse_listed(text: &str) -> Result<ListedPlan> {
        if let Some(plan) = decode::listed_plan(text) {
            return Ok(plan);
        }
        Plan::parse_tree(text).map(ListedPlan::from)
    }
}

impl ControlRecord {
    /// Parses a record value strictly, including the embedded plan and its ID.
    pub fn parse_value(text: &str) -> Result<ControlRecord, String> {
        // The common case decodes straight into the record; the reference reader decides the rest.
        if let Some(record) = decode::control_record(text) {
            return Ok(record);
        }
        ControlRecord::parse_value_tree(text)
    }
}

//! `plan --retained LOCATION…`: one plan from every recovery point the operator keeps, so that a
//! scheduled cleanup never reaches past the oldest one. Each LOCATION is a Flink checkpoint
//! directory (`<dir>/<job-id>/chk-N/_metadata`, every job found; or one job's directory), a
//! savepoint directory (every `savepoint-*` in it) or a single snapshot, a path or URI. Finding
//! the points, planning each (a point that cannot be read, lacks the operator or names another
//! topic stops the plan, naming it; `--exclude` leaves one out on purpose), the minimum over
//! them and which point bounds which partition are the component's (`snapshots.plan-retained`,
//! every read through the same store as `--checkpoint`); this module words the outcome.

use action_state_cleanup::cleanup::{
    CleanupInstance, MarkerFilesPlan, OperatorRef, RetainedFailure, RetainedPlan, SnapshotFailure,
};

use super::args::RetainedSource;
use serde_json::json;

use super::failure::Failure;
use super::output::offsets_json;
use super::snapshot::stored;

/// A snapshot failure worded and classified as for `--checkpoint` (exit 3 or 4).
fn failure_of(instance: &mut CleanupInstance, failure: SnapshotFailure) -> Failure {
    match stored::<()>(instance, Ok(Err(failure))) {
        Err(failure) => failure,
        Ok(()) => Failure::refused("the component reported a failure without one"),
    }
}

/// What `plan --retained` read, for the review and `--json`.
pub struct Retained(RetainedPlan);

/// The plan (as its file's text) from every point `--retained` finds, for `apply` and `status`.
pub fn plan_from(source: &RetainedSource) -> Result<(String, Retained), Failure> {
    let operator = super::snapshot::operator_named(
        &source.operator_uid,
        &source.operator_uid_hash,
        "--retained",
    )?;
    let mut instance = super::session::offline_instance()?;
    super::snapshot::use_flink_config(&mut instance, source.flink_config.as_deref())?;
    let (_, read) = plan(&mut instance, &source.retained, &source.exclude, &operator)?;
    Ok((read.document().to_owned(), read))
}

/// The records kept on each partition only for recovery points older than the newest one:
/// those from where the partition begins up to the newest point's offset (and not past its
/// end). What a cleanup could delete if the older points were let go; it grows when they stay.
pub struct HeldBelowNewest {
    pub point: String,
    pub partitions: Vec<(u32, u64)>,
}

impl HeldBelowNewest {
    pub fn total(&self) -> u64 {
        self.partitions.iter().map(|(_, n)| n).sum()
    }

    pub fn json(&self) -> serde_json::Value {
        json!({
            "point": self.point,
            "records": self.total(),
            "partitions": self.partitions.iter()
                .map(|(p, n)| (p.to_string(), json!(n)))
                .collect::<serde_json::Map<_, _>>(),
        })
    }

    pub fn text(&self) -> String {
        format!(
            "{} held below the newest retained point {} (kept only for older recovery points)",
            super::wide::counted_records(self.total()),
            self.point
        )
    }
}

/// The component's plan from every retained point, with its account of the points.
pub fn plan(
    instance: &mut CleanupInstance,
    locations: &[String],
    excluded: &[String],
    operator: &OperatorRef,
) -> Result<(MarkerFilesPlan, Retained), Failure> {
    let planned = match instance.plan_retained(locations, excluded, operator) {
        Ok(Ok(planned)) => planned,
        Ok(Err(RetainedFailure::Refused(error))) => {
            return Err(failure_of(instance, SnapshotFailure::Refused(error)));
        }
        Ok(Err(RetainedFailure::Store(store))) => {
            return Err(failure_of(instance, SnapshotFailure::Store(store)));
        }
        Ok(Err(RetainedFailure::Point(point))) => {
            let location = point.location;
            let failure = failure_of(instance, point.failure);
            return Err(Failure {
                message: format!("retained recovery point {location}: {}", failure.message),
                hint: Some(format!(
                    "nothing was planned: every recovery point found must be plannable, since any of them may be restored; if {location} belongs to another job or is no longer needed, leave it out with --exclude {location}"
                )),
                ..failure
            });
        }
        Err(trap) => return Err(Failure::internal(&trap)),
    };
    let markers = planned.points.len();
    Ok((
        MarkerFilesPlan {
            plan: planned.plan.clone(),
            markers: u32::try_from(markers).unwrap_or(u32::MAX),
        },
        Retained(planned),
    ))
}

impl Retained {
    /// The plan document, as the component rendered it.
    pub fn document(&self) -> &str {
        &self.0.text
    }
    /// The newest point: the one whose offsets are furthest on (the largest total; of equal
    /// ones the last listed, a `chk-N` with the highest N), and what is held below it given where
    /// each partition begins and ends now.
    pub fn held_below_newest(
        &self,
        beginnings: &[(u32, u64)],
        ends: &[(u32, u64)],
    ) -> Option<HeldBelowNewest> {
        let newest = self.0.points.iter().max_by_key(|point| {
            point
                .offsets
                .iter()
                .map(|po| u128::from(po.offset))
                .sum::<u128>()
        })?;
        let at = |pairs: &[(u32, u64)], partition: u32| {
            pairs.iter().find(|(p, _)| *p == partition).map(|(_, o)| *o)
        };
        let partitions: Vec<(u32, u64)> = newest
            .offsets
            .iter()
            .filter_map(|po| {
                let beginning = at(beginnings, po.partition)?;
                let upto = at(ends, po.partition).map_or(po.offset, |end| end.min(po.offset));
                Some((po.partition, upto.saturating_sub(beginning)))
            })
            .collect();
        // No live partition to measure against (the topic is gone): nothing to say.
        if partitions.is_empty() {
            return None;
        }
        Some(HeldBelowNewest {
            point: newest.location.clone(),
            partitions,
        })
    }

    /// The requests and bytes every listing and read took.
    pub fn reads(&self) -> serde_json::Value {
        json!({ "requests": self.0.reads.requests, "bytes": self.0.reads.bytes })
    }

    fn location(&self, index: u32) -> &str {
        self.0
            .points
            .get(index as usize)
            .map_or("", |point| point.location.as_str())
    }

    fn bounded(&self, index: u32) -> usize {
        self.0
            .bounds
            .iter()
            .filter(|bound| bound.points.contains(&index))
            .count()
    }

    pub fn json(&self) -> serde_json::Value {
        let planned = &self.0;
        json!({
            "points": planned.points.iter().map(|p| json!({
                "location": p.location,
                "offsets": offsets_json(&p.offsets),
            })).collect::<Vec<_>>(),
            "recorded": self.location(planned.recorded),
            "boundsEveryPartition": planned.bounds_every_partition,
            "boundedBy": planned.bounds.iter().map(|bound| (bound.partition.to_string(), json!({
                "offset": bound.offset,
                "points": bound.points.iter().map(|i| self.location(*i)).collect::<Vec<_>>(),
            }))).collect::<serde_json::Map<_, _>>(),
            "incomplete": planned.incomplete,
            "excluded": planned.excluded,
            "unmatchedExclusions": planned.unmatched_exclusions,
        })
    }

    pub fn text(&self, all: bool) -> String {
        let planned = &self.0;
        let mut out = format!(
            "Planned from {} retained recovery point{}:\n",
            planned.points.len(),
            if planned.points.len() == 1 { "" } else { "s" }
        );
        for (index, point) in (0u32..).zip(&planned.points) {
            out.push_str(&format!(
                "  {}  bounds {} of {} partitions\n",
                point.location,
                self.bounded(index),
                planned.bounds.len()
            ));
        }
        let recorded = self.location(planned.recorded);
        if planned.bounds_every_partition {
            out.push_str(&format!(
                "{recorded} bounds every partition: the plan records it as its recovery point.\n"
            ));
        } else {
            out.push_str(&format!(
                "No single point bounds every partition; the plan records {recorded}, which bounds the most. Per partition:\n"
            ));
            let shown = if all { usize::MAX } else { 20 };
            for bound in planned.bounds.iter().take(shown) {
                let names: Vec<&str> = bound.points.iter().map(|i| self.location(*i)).collect();
                out.push_str(&format!(
                    "  partition {}: {} from {}\n",
                    bound.partition,
                    bound.offset,
                    names.join(", ")
                ));
            }
        }
        for folder in &planned.incomplete {
            out.push_str(&format!(
                "Not a recovery point: {folder} has no _metadata (a checkpoint in progress, failed or being deleted).\n"
            ));
        }
        for folder in &planned.excluded {
            out.push_str(&format!("Left out (--exclude): {folder}\n"));
        }
        for exclusion in &planned.unmatched_exclusions {
            out.push_str(&format!(
                "--exclude {exclusion} names none of the recovery points found (written as they are listed above?).\n"
            ));
        }
        out
    }
}

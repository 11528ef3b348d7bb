//! `plan --retained LOCATION…`: one plan from every recovery point the operator keeps, so that a
//! scheduled cleanup never reaches past the oldest one. Each LOCATION is a Flink checkpoint
//! directory (`<dir>/<job-id>/chk-N/_metadata`, every job found; or one job's directory), a
//! savepoint directory (every `savepoint-*` in it) or a single snapshot. Every point found is
//! planned on its own (a point that cannot be read, lacks the operator or names another topic
//! stops the plan, naming it; `--exclude` leaves one out on purpose); the plan is then the
//! component's minimum over their markers (the seed's rule, applied across points), recorded
//! under the point that bounds every partition (or, when none does, the one that bounds most).
//! Which folders hold snapshots is the component's decision too (`snapshots.discover`, folder
//! listings through the same store as planning), so a LOCATION may be a URI (`s3://…`).

use std::collections::BTreeMap;
use std::path::Path;

use action_state_cleanup::cleanup::{
    CleanupInstance, MarkerFilesPlan, OperatorRef, SnapshotFailure, SnapshotStoreError,
};
use serde_json::json;

use super::failure::Failure;
use super::output::offsets_json;
use super::session::answer;
use super::snapshot::{SnapshotAt, stored};

/// One recovery point found and what it alone would allow: the minimum offset per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub location: String,
    pub offsets: BTreeMap<u32, u64>,
}

/// Which point bounds each partition, and the one the plan records.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// Per partition: the minimum offset and the indexes of the points holding it.
    pub partitions: BTreeMap<u32, (u64, Vec<usize>)>,
    /// The index of the point recorded as the plan's sourceRecoveryPoint.
    pub recorded: usize,
    /// Whether that point bounds every partition (in a healthy job the oldest does).
    pub bounds_every_partition: bool,
}

/// What `plan --retained` read, for the review and `--json`.
pub struct Retained {
    pub points: Vec<Point>,
    pub bounds: Bounds,
    /// Checkpoint folders without `_metadata` (in progress, failed or being deleted): not
    /// recovery points, listed so that nothing is left out in silence.
    pub incomplete: Vec<String>,
    pub excluded: Vec<String>,
}

/// Every snapshot under `locations` (the component's discovery: `chk-N` by N, the rest by
/// name), less the excluded ones, and the checkpoint folders that have no `_metadata`.
pub fn discover(
    instance: &mut CleanupInstance,
    locations: &[String],
    excluded: &[String],
) -> Result<(Vec<String>, Vec<String>), Failure> {
    let mut found = Vec::new();
    let mut incomplete = Vec::new();
    for location in locations {
        let discovered = instance.discover_snapshots(location);
        let discovered = match discovered {
            Ok(Err(SnapshotFailure::Store(failure)))
                if matches!(failure.error, SnapshotStoreError::NotFound(_)) =>
            {
                return Err(Failure::refused(format!(
                    "--retained {location}: no such directory (give a checkpoint directory, a savepoint directory or one snapshot)"
                )));
            }
            other => stored(instance, other)?,
        };
        if discovered.snapshots.is_empty() {
            let trimmed = location.trim_end_matches('/');
            return Err(Failure::refused(format!(
                "--retained {location} holds no checkpoint or savepoint: neither {trimmed}/_metadata, nor <job-id>/chk-N/_metadata, chk-N/_metadata or savepoint-*/_metadata below it"
            )));
        }
        found.extend(discovered.snapshots);
        incomplete.extend(discovered.incomplete);
    }
    found.dedup();
    let kept = found
        .into_iter()
        .filter(|found| !excluded.iter().any(|e| same_snapshot(e, found)))
        .collect();
    Ok((kept, incomplete))
}

/// Whether `excluded` (a snapshot directory or its `_metadata`) names the snapshot `found`:
/// local paths compared where they lead, URIs as written.
fn same_snapshot(excluded: &str, found: &str) -> bool {
    let excluded = excluded.trim_end_matches('/');
    let excluded = excluded.strip_suffix("/_metadata").unwrap_or(excluded);
    if excluded.contains("://") || found.contains("://") {
        return excluded == found.trim_end_matches('/');
    }
    match (
        std::fs::canonicalize(excluded),
        std::fs::canonicalize(found),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => Path::new(excluded) == Path::new(found),
    }
}

/// Per partition the smallest offset over `points` and which points hold it; the point
/// recorded is the first that bounds every partition, else the first that bounds most.
pub fn bounds(points: &[Point]) -> Bounds {
    let mut partitions: BTreeMap<u32, (u64, Vec<usize>)> = BTreeMap::new();
    for (index, point) in points.iter().enumerate() {
        for (&partition, &offset) in &point.offsets {
            let entry = partitions.entry(partition).or_insert((offset, Vec::new()));
            if offset < entry.0 {
                *entry = (offset, Vec::new());
            }
            if offset == entry.0 {
                entry.1.push(index);
            }
        }
    }
    let bounded = |index: usize| {
        partitions
            .values()
            .filter(|(_, holders)| holders.contains(&index))
            .count()
    };
    let mut recorded = 0;
    for index in 0..points.len() {
        if bounded(index) > bounded(recorded) {
            recorded = index;
        }
    }
    Bounds {
        bounds_every_partition: bounded(recorded) == partitions.len(),
        partitions,
        recorded,
    }
}

/// Plans every retained point, then the minimum over them under the recorded point.
pub fn plan(
    instance: &mut CleanupInstance,
    locations: &[String],
    excluded: &[String],
    operator: &OperatorRef,
) -> Result<(MarkerFilesPlan, Retained), Failure> {
    let (snapshots, incomplete) = discover(instance, locations, excluded)?;
    if snapshots.is_empty() {
        return Err(Failure::refused(
            "--retained found recovery points, but --exclude left out every one of them",
        ));
    }
    let mut points = Vec::new();
    let mut plans = Vec::new();
    for location in &snapshots {
        let point = SnapshotAt::new(location.clone())
            .plan(instance, operator, None)
            .map_err(|failure| {
                Failure {
                    message: format!("retained recovery point {location}: {}", failure.message),
                    hint: Some(format!(
                        "nothing was planned: every recovery point found must be plannable, since any of them may be restored; if {location} belongs to another job or is no longer needed, leave it out with --exclude {location}"
                    )),
                    ..failure
                }
            })?;
        points.push(Point {
            location: location.clone(),
            offsets: point
                .plan
                .offsets
                .iter()
                .map(|o| (o.partition, o.offset))
                .collect(),
        });
        plans.push(point.plan);
    }
    let bounds = bounds(&points);
    // One versioned marker per point (its own minimum): the component checks that every point
    // names the same topic, topic ID and partitions, and takes the minimum.
    let recorded = &points[bounds.recorded].location;
    let planner = instance
        .start_marker_files(recorded)
        .map_err(|e| Failure::internal(&e))?;
    let mut markers = 0;
    for (point, plan) in points.iter().zip(&plans) {
        let marker = json!({
            "schemaVersion": 1,
            "topic": plan.topic,
            "topicId": plan.topic_id,
            "offsets": offsets_json(&plan.offsets),
        });
        let added = instance.add_marker_file(&planner, &point.location, &marker.to_string());
        answer(instance, added)?;
        markers += 1;
    }
    let planned = instance.finish_marker_files(planner);
    let MarkerFilesPlan { plan, .. } = answer(instance, planned)?;
    Ok((
        MarkerFilesPlan { plan, markers },
        Retained {
            points,
            bounds,
            incomplete,
            excluded: excluded.to_vec(),
        },
    ))
}

impl Retained {
    pub fn json(&self) -> serde_json::Value {
        let name = |index: &usize| self.points[*index].location.clone();
        json!({
            "points": self.points.iter().map(|p| json!({
                "location": p.location,
                "offsets": p.offsets.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "recorded": self.points[self.bounds.recorded].location,
            "boundsEveryPartition": self.bounds.bounds_every_partition,
            "boundedBy": self.bounds.partitions.iter().map(|(partition, (offset, holders))| (partition.to_string(), json!({
                "offset": offset,
                "points": holders.iter().map(name).collect::<Vec<_>>(),
            }))).collect::<serde_json::Map<_, _>>(),
            "incomplete": self.incomplete,
            "excluded": self.excluded,
        })
    }

    pub fn text(&self, all: bool) -> String {
        let mut out = format!(
            "Planned from {} retained recovery point{}:\n",
            self.points.len(),
            if self.points.len() == 1 { "" } else { "s" }
        );
        for (index, point) in self.points.iter().enumerate() {
            let bounded = self
                .bounds
                .partitions
                .values()
                .filter(|(_, holders)| holders.contains(&index))
                .count();
            out.push_str(&format!(
                "  {}  bounds {bounded} of {} partitions\n",
                point.location,
                self.bounds.partitions.len()
            ));
        }
        let recorded = &self.points[self.bounds.recorded].location;
        if self.bounds.bounds_every_partition {
            out.push_str(&format!(
                "{recorded} bounds every partition: the plan records it as its recovery point.\n"
            ));
        } else {
            out.push_str(&format!(
                "No single point bounds every partition; the plan records {recorded}, which bounds the most. Per partition:\n"
            ));
            let shown = if all { usize::MAX } else { 20 };
            for (partition, (offset, holders)) in self.bounds.partitions.iter().take(shown) {
                let names: Vec<&str> = holders
                    .iter()
                    .map(|i| self.points[*i].location.as_str())
                    .collect();
                out.push_str(&format!(
                    "  partition {partition}: {offset} from {}\n",
                    names.join(", ")
                ));
            }
        }
        for folder in &self.incomplete {
            out.push_str(&format!(
                "Not a recovery point: {folder} has no _metadata (a checkpoint in progress, failed or being deleted).\n"
            ));
        }
        for folder in &self.excluded {
            out.push_str(&format!("Left out (--exclude): {folder}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(location: &str, offsets: &[(u32, u64)]) -> Point {
        Point {
            location: location.into(),
            offsets: offsets.iter().copied().collect(),
        }
    }

    #[test]
    fn the_oldest_point_bounds_every_partition_in_a_healthy_job() {
        let points = [
            point("chk-7", &[(0, 170), (1, 75)]),
            point("chk-5", &[(0, 120), (1, 60)]),
            point("savepoint-a", &[(0, 150), (1, 60)]),
        ];
        let b = bounds(&points);
        assert_eq!(b.recorded, 1);
        assert!(b.bounds_every_partition);
        assert_eq!(b.partitions[&0], (120, vec![1]));
        assert_eq!(b.partitions[&1], (60, vec![1, 2]));
    }

    #[test]
    fn without_a_point_that_bounds_everything_the_one_bounding_most_is_recorded() {
        let points = [
            point("a", &[(0, 100), (1, 60), (2, 90)]),
            point("b", &[(0, 90), (1, 70), (2, 80)]),
        ];
        let b = bounds(&points);
        assert_eq!(b.recorded, 1, "b bounds partitions 0 and 2");
        assert!(!b.bounds_every_partition);
        assert_eq!(b.partitions[&1], (60, vec![0]));
    }
}

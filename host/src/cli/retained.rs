//! `plan --retained LOCATION…`: one plan from every recovery point the operator keeps, so that a
//! scheduled cleanup never reaches past the oldest one. Each LOCATION is a Flink checkpoint
//! directory (`<dir>/<job-id>/chk-N/_metadata`, every job found; or one job's directory), a
//! savepoint directory (every `savepoint-*` in it) or a single snapshot. Every point found is
//! planned on its own (a point that cannot be read, lacks the operator or names another topic
//! stops the plan, naming it; `--exclude` leaves one out on purpose); the plan is then the
//! component's minimum over their markers (the seed's rule, applied across points), recorded
//! under the point that bounds every partition (or, when none does, the one that bounds most).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use action_state_cleanup::cleanup::{CleanupInstance, MarkerFilesPlan, OperatorRef};
use serde_json::json;

use super::failure::Failure;
use super::output::offsets_json;
use super::session::answer;
use super::snapshot::SnapshotAt;

/// Folders of a job's checkpoint directory that hold state files, never a snapshot of their own.
const STATE_FOLDERS: [&str; 2] = ["shared", "taskowned"];

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

/// Every snapshot under `locations` (sorted: `chk-N` by N, the rest by name), less the
/// excluded ones, and the checkpoint folders that have no `_metadata`.
pub fn discover(
    locations: &[PathBuf],
    excluded: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Failure> {
    let mut found = Vec::new();
    let mut incomplete = Vec::new();
    for location in locations {
        let before = found.len();
        if location.file_name().is_some_and(|n| n == "_metadata") && location.is_file() {
            found.push(
                location
                    .parent()
                    .map_or_else(PathBuf::new, Path::to_path_buf),
            );
        } else if !location.is_dir() {
            return Err(Failure::refused(format!(
                "--retained {}: no such directory (give a checkpoint directory, a savepoint directory or one snapshot)",
                location.display()
            )));
        } else {
            scan(location, 0, &mut found, &mut incomplete)?;
        }
        if found.len() == before {
            return Err(Failure::refused(format!(
                "--retained {} holds no checkpoint or savepoint: neither {}/_metadata, nor <job-id>/chk-N/_metadata, chk-N/_metadata or savepoint-*/_metadata below it",
                location.display(),
                location.display()
            )));
        }
    }
    let is_excluded = |path: &Path| {
        excluded.iter().any(|e| {
            same_place(e, path)
                || e.parent()
                    .is_some_and(|p| same_place(p, path) && e.ends_with("_metadata"))
        })
    };
    found.dedup();
    let kept = found.into_iter().filter(|p| !is_excluded(p)).collect();
    Ok((kept, incomplete))
}

fn same_place(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A snapshot directory here, or the snapshots one or two levels below (`<job-id>/chk-N`).
fn scan(
    dir: &Path,
    depth: usize,
    found: &mut Vec<PathBuf>,
    incomplete: &mut Vec<PathBuf>,
) -> Result<(), Failure> {
    if dir.join("_metadata").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Failure::refused(format!("cannot list {}: {e}", dir.display())))?;
    let mut children: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    children.sort_by_key(|p| order_key(p));
    for child in children {
        let name = child
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if child.join("_metadata").is_file() {
            found.push(child);
        } else if checkpoint_number(&name).is_some() {
            incomplete.push(child);
        } else if depth == 0 && !STATE_FOLDERS.contains(&name.as_str()) {
            scan(&child, depth + 1, found, incomplete)?;
        }
    }
    Ok(())
}

fn checkpoint_number(name: &str) -> Option<u64> {
    name.strip_prefix("chk-")?.parse().ok()
}

/// `chk-N` in numeric order, before any other name; the rest by name.
fn order_key(path: &Path) -> (u8, u64, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match checkpoint_number(&name) {
        Some(n) => (0, n, name),
        None => (1, 0, name),
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
    locations: &[PathBuf],
    excluded: &[PathBuf],
    operator: &OperatorRef,
) -> Result<(MarkerFilesPlan, Retained), Failure> {
    let (snapshots, incomplete) = discover(locations, excluded)?;
    if snapshots.is_empty() {
        return Err(Failure::refused(
            "--retained found recovery points, but --exclude left out every one of them",
        ));
    }
    let mut points = Vec::new();
    let mut plans = Vec::new();
    for path in &snapshots {
        let point = SnapshotAt::new(path.display().to_string())
            .plan(instance, operator, None)
            .map_err(|failure| {
                let location = path.display();
                Failure {
                    message: format!("retained recovery point {location}: {}", failure.message),
                    hint: Some(format!(
                        "nothing was planned: every recovery point found must be plannable, since any of them may be restored; if {location} belongs to another job or is no longer needed, leave it out with --exclude {location}"
                    )),
                    ..failure
                }
            })?;
        points.push(Point {
            location: path.display().to_string(),
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
            incomplete: incomplete.iter().map(|p| p.display().to_string()).collect(),
            excluded: excluded.iter().map(|p| p.display().to_string()).collect(),
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

    #[test]
    fn checkpoint_folders_are_ordered_by_number() {
        let mut paths = [
            PathBuf::from("/j/chk-10"),
            PathBuf::from("/j/savepoint-x"),
            PathBuf::from("/j/chk-9"),
        ];
        paths.sort_by_key(|p| order_key(p));
        assert_eq!(
            paths.map(|p| p.display().to_string()),
            ["/j/chk-9", "/j/chk-10", "/j/savepoint-x"]
        );
    }
}

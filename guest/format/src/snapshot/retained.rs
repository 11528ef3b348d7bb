//! One plan from every recovery point an operator keeps (`plan --retained`): the snapshots
//! found below each retained location, each planned on its own, and the plan of their minimum
//! (the seed's rule, applied across points), recorded under the point that bounds every
//! partition, or, when none does, the one that bounds the most. Written once here, so that
//! every host (CLI, Python, JVM) answers the same locations with the same plan and the same
//! account of which point bounds which partition.

use std::collections::BTreeMap;

use super::OperatorRef;
use super::store::{
    Reads, SnapshotFailure, SnapshotStore, StoreError, StoredSnapshot, discover, trimmed,
};
use crate::error::CleanupError;
use crate::marker::{Marker, VersionedMarker};
use crate::offsets::PartitionOffsets;
use crate::plan::Plan;
use crate::planning::plan_from_labelled_markers;

/// One recovery point found and what it alone allows: its minimum offset per partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetainedPoint {
    pub location: String,
    pub offsets: PartitionOffsets,
}

/// The smallest offset of one partition over every point, and the points (indexes) holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionBound {
    pub partition: u32,
    pub offset: u64,
    pub points: Vec<usize>,
}

/// The plan from every retained point, with the account of how it was bounded.
#[derive(Debug, Clone)]
pub struct RetainedPlan {
    /// The minimum over every point, recording `points[recorded]` as its recovery point.
    pub plan: Plan,
    /// Every point planned, in discovery order (`chk-N` by N, then by name; locations in the
    /// order given).
    pub points: Vec<RetainedPoint>,
    /// Per partition, ascending.
    pub bounds: Vec<PartitionBound>,
    /// The point the plan records: the first that bounds every partition, else the first that
    /// bounds the most.
    pub recorded: usize,
    /// Whether `points[recorded]` bounds every partition (in a healthy job the oldest does).
    pub bounds_every_partition: bool,
    /// `chk-N` folders without `_metadata`: not recovery points, named so that nothing is left
    /// out in silence.
    pub incomplete: Vec<String>,
    /// The points found and left out because an exclusion named them.
    pub excluded: Vec<String>,
    /// Exclusions that named none of the points found (a typo, or a point deleted since).
    pub unmatched_exclusions: Vec<String>,
    pub reads: Reads,
}

/// Why no plan was made from the retained locations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetainedFailure {
    /// The locations give nothing to plan (one is not there or holds no snapshot, or the
    /// exclusions leave out every point), or the points disagree on topic, ID or partitions.
    Refused(CleanupError),
    /// A location could not be listed.
    Store(SnapshotFailure),
    /// A recovery point found could not be planned: every one must be, since any of them may
    /// be restored.
    Point {
        location: String,
        failure: Box<SnapshotFailure>,
    },
}

/// The plan of `operator`'s markers over every snapshot below `locations`, less those an entry
/// of `exclusions` names (a snapshot directory or its `_metadata`, written as it was found).
pub fn plan_retained(
    store: &mut dyn SnapshotStore,
    locations: &[String],
    exclusions: &[String],
    operator: &OperatorRef,
) -> Result<RetainedPlan, RetainedFailure> {
    let mut reads = Reads::default();
    let mut found: Vec<String> = Vec::new();
    let mut incomplete = Vec::new();
    if locations.is_empty() {
        return Err(refused(
            "no retained location was given: name the job's checkpoint directory, its savepoint directory or a snapshot".into(),
        ));
    }
    for location in locations {
        let discovered = match discover(store, location) {
            Ok(discovered) => discovered,
            Err(SnapshotFailure::Store {
                error: StoreError::NotFound(_),
                ..
            }) => {
                return Err(refused(format!(
                    "retained location {location}: no such directory (give a checkpoint directory, a savepoint directory or one snapshot)"
                )));
            }
            Err(failure) => return Err(RetainedFailure::Store(failure)),
        };
        add(&mut reads, discovered.reads);
        if discovered.snapshots.is_empty() {
            let trimmed = trimmed(location);
            return Err(refused(format!(
                "retained location {location} holds no checkpoint or savepoint: neither {trimmed}/_metadata, nor <job-id>/chk-N/_metadata, chk-N/_metadata or savepoint-*/_metadata below it"
            )));
        }
        for snapshot in discovered.snapshots {
            if !found.contains(&snapshot) {
                found.push(snapshot);
            }
        }
        incomplete.extend(discovered.incomplete);
    }

    let (excluded, kept): (Vec<String>, Vec<String>) = found
        .into_iter()
        .partition(|point| exclusions.iter().any(|e| names_snapshot(e, point)));
    let unmatched_exclusions = exclusions
        .iter()
        .filter(|e| !excluded.iter().any(|point| names_snapshot(e, point)))
        .cloned()
        .collect();
    if kept.is_empty() {
        return Err(refused(format!(
            "every recovery point found was excluded ({}): nothing is left to plan from",
            excluded.join(", ")
        )));
    }

    let mut points = Vec::with_capacity(kept.len());
    let mut markers = Vec::with_capacity(kept.len());
    for location in kept {
        let planned = StoredSnapshot::open(store, &location)
            .and_then(|mut snapshot| snapshot.plan(store, None, operator));
        let planned = match planned {
            Ok(planned) => planned,
            Err(failure) => {
                return Err(RetainedFailure::Point {
                    location,
                    failure: Box::new(failure),
                });
            }
        };
        add(&mut reads, planned.reads);
        let fields = planned.plan.into_fields();
        // One versioned marker per point (its own minimum): the planner checks that every
        // point names the same topic, topic ID and partitions, and takes the minimum.
        markers.push(Marker::Versioned(VersionedMarker {
            topic: fields.topic,
            topic_id: fields.topic_id,
            offsets: fields.offsets.clone(),
        }));
        points.push(RetainedPoint {
            location,
            offsets: fields.offsets,
        });
    }

    let (bounds, recorded, bounds_every_partition) = bounds(&points);
    let plan = plan_from_labelled_markers(&points[recorded].location, &markers, |index| {
        format!("retained recovery point {}", points[index].location)
    })
    .map_err(RetainedFailure::Refused)?;
    Ok(RetainedPlan {
        plan,
        points,
        bounds,
        recorded,
        bounds_every_partition,
        incomplete,
        excluded,
        unmatched_exclusions,
        reads,
    })
}

/// Per partition the smallest offset over `points` and which points hold it; the point
/// recorded (the first that bounds every partition, else the first that bounds most); and
/// whether it bounds every partition.
pub fn bounds(points: &[RetainedPoint]) -> (Vec<PartitionBound>, usize, bool) {
    let mut partitions: BTreeMap<u32, (u64, Vec<usize>)> = BTreeMap::new();
    for (index, point) in points.iter().enumerate() {
        for (partition, offset) in point.offsets.iter() {
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
    let every = bounded(recorded) == partitions.len();
    let bounds = partitions
        .into_iter()
        .map(|(partition, (offset, points))| PartitionBound {
            partition,
            offset,
            points,
        })
        .collect();
    (bounds, recorded, every)
}

/// Whether the exclusion `exclusion` (a snapshot directory or its `_metadata`) names the
/// snapshot directory `point`: compared as written, but for trailing `/`.
fn names_snapshot(exclusion: &str, point: &str) -> bool {
    let exclusion = trimmed(exclusion);
    let exclusion = exclusion.strip_suffix("/_metadata").unwrap_or(exclusion);
    exclusion == trimmed(point)
}

fn refused(sentence: String) -> RetainedFailure {
    RetainedFailure::Refused(CleanupError::InvalidArgument(sentence))
}

fn add(total: &mut Reads, more: Reads) {
    total.requests = total.requests.saturating_add(more.requests);
    total.bytes = total.bytes.saturating_add(more.bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(location: &str, offsets: &[(u32, u64)]) -> RetainedPoint {
        let mut map = PartitionOffsets::new();
        for &(partition, offset) in offsets {
            map.insert(partition, offset);
        }
        RetainedPoint {
            location: location.into(),
            offsets: map,
        }
    }

    #[test]
    fn the_oldest_point_bounds_every_partition_in_a_healthy_job() {
        let points = [
            point("chk-7", &[(0, 170), (1, 75)]),
            point("chk-5", &[(0, 120), (1, 60)]),
            point("savepoint-a", &[(0, 150), (1, 60)]),
        ];
        let (bounds, recorded, every) = bounds(&points);
        assert_eq!(recorded, 1);
        assert!(every);
        assert_eq!((bounds[0].offset, bounds[0].points.clone()), (120, vec![1]));
        assert_eq!(
            (bounds[1].offset, bounds[1].points.clone()),
            (60, vec![1, 2])
        );
    }

    #[test]
    fn without_a_point_that_bounds_everything_the_one_bounding_most_is_recorded() {
        let points = [
            point("a", &[(0, 100), (1, 60), (2, 90)]),
            point("b", &[(0, 90), (1, 70), (2, 80)]),
        ];
        let (bounds, recorded, every) = bounds(&points);
        assert_eq!(recorded, 1, "b bounds partitions 0 and 2");
        assert!(!every);
        assert_eq!((bounds[1].offset, bounds[1].points.clone()), (60, vec![0]));
    }

    #[test]
    fn an_exclusion_names_a_snapshot_by_its_directory_or_its_metadata() {
        assert!(names_snapshot(
            "s3://b/sp/savepoint-1/",
            "s3://b/sp/savepoint-1"
        ));
        assert!(names_snapshot("/x/chk-3/_metadata", "/x/chk-3"));
        assert!(!names_snapshot("/x/chk-3", "/x/chk-30"));
    }
}

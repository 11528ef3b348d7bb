//! A snapshot's stored markers as the two readers of them take them: the planner (versioned
//! markers only, refused in the Java tool's words) and a restore (what a runtime would hand over,
//! legacy maps included).

use super::MARKER_STATE;
use super::kryo::{self, Element};
use super::{OperatorRef, Snapshot, StateFile, StoredMarker, operator_label, printable};
use crate::error::{CleanupError, Result};
use crate::marker::{Marker, VersionedMarker};
use crate::offsets::PartitionOffsets;
use crate::plan::Plan;
use crate::planning::plan_from_labelled_markers;

impl Snapshot<'_> {
    /// The plan of the markers `which` stored (SPEC §3), exactly as the Java tool's
    /// `plan --checkpoint` computes it: `recovery_point` is the snapshot path as given.
    pub fn plan(
        &self,
        recovery_point: &str,
        which: &OperatorRef,
        files: &[StateFile<'_>],
    ) -> Result<(Plan, usize)> {
        let stored = self.stored_markers(which, files)?;
        if stored.is_empty() {
            return Err(CleanupError::InvalidMarker(format!(
                "Recovery markers must not be empty: state {MARKER_STATE} of operator {} in snapshot {} holds no element",
                operator_label(self.operator(which)?),
                self.metadata_name
            )));
        }
        let mut markers = Vec::with_capacity(stored.len());
        for marker in &stored {
            markers.push(to_marker(marker)?);
        }
        let plan = plan_from_labelled_markers(recovery_point, &markers, |index| {
            let marker = &stored[index];
            element_label(marker)
        })?;
        Ok((plan, stored.len()))
    }

    /// The markers `which` stored, as a runtime restoring this snapshot hands them over (SPEC
    /// §6): versioned ones checked as the planner checks them, legacy maps as they are (standard
    /// recovery restores them). An element of any other class is refused: no runtime can
    /// restore from it.
    pub fn restore_markers(
        &self,
        which: &OperatorRef,
        files: &[StateFile<'_>],
    ) -> Result<Vec<Marker>> {
        let stored = self.stored_markers(which, files)?;
        stored
            .iter()
            .map(|marker| match &marker.element_value {
                Element::Versioned { .. } => to_marker(marker),
                Element::Legacy(entries) => legacy_marker(marker, entries),
                Element::Null => Err(self.unrestorable(marker, "null")),
                Element::Other(class) => Err(self.unrestorable(marker, &printable(class))),
            })
            .collect()
    }

    fn unrestorable(&self, marker: &StoredMarker, class: &str) -> CleanupError {
        CleanupError::InvalidMarker(format!(
            "Snapshot {}: {} is a {class}, which no runtime can restore from",
            self.metadata_name,
            element_label(marker)
        ))
    }
}

/// A legacy map read as a marker text is: the same rules (non-negative, one entry per
/// partition), named by the element.
fn legacy_marker(marker: &StoredMarker, entries: &[(i32, i64)]) -> Result<Marker> {
    let members: Vec<String> = entries
        .iter()
        .map(|(p, o)| format!("\"{p}\":{o}"))
        .collect();
    Marker::parse(&format!("{{{}}}", members.join(","))).map_err(|error| match error {
        CleanupError::InvalidMarker(why) => {
            CleanupError::InvalidMarker(format!("{why} ({})", element_label(marker)))
        }
        other => other,
    })
}

fn element_label(marker: &StoredMarker) -> String {
    if marker.element_count == 1 {
        format!("the marker of subtask {}", marker.subtask)
    } else {
        format!(
            "marker {} of subtask {}",
            marker.element + 1,
            marker.subtask
        )
    }
}

/// A stored element as a marker the planner takes, refused with the Java tool's words where it
/// has them.
fn to_marker(stored: &StoredMarker) -> Result<Marker> {
    let label = element_label(stored);
    let unsupported = |class: &str| {
        CleanupError::InvalidMarker(format!(
            "Checkpoint-aligned cleanup requires versioned Kafka recovery markers; legacy or unsupported marker found: {class} ({label})"
        ))
    };
    match &stored.element_value {
        Element::Null => Err(unsupported("null")),
        Element::Other(class) => Err(unsupported(&printable(class))),
        Element::Legacy(_) => Err(unsupported(kryo::HASH_MAP_CLASS)),
        Element::Versioned {
            schema_version,
            topic,
            topic_id,
            offsets,
        } => {
            if *schema_version != 1 {
                return Err(CleanupError::InvalidMarker(format!(
                    "Unsupported Kafka recovery marker schema {schema_version} ({label})"
                )));
            }
            let missing = |field: &str| {
                CleanupError::InvalidMarker(format!(
                    "Recovery marker field {field} is null ({label})"
                ))
            };
            let topic = topic.clone().ok_or_else(|| missing("topic"))?;
            let topic_id = topic_id.clone().ok_or_else(|| missing("topicId"))?;
            // SPEC §2 refuses control characters in text fields; refused here, the sentences
            // after this one never hold a raw line break.
            if topic.chars().chain(topic_id.chars()).any(char::is_control) {
                return Err(CleanupError::InvalidMarker(format!(
                    "Recovery marker topic and topic ID must not contain control characters, but {label} has topic {topic:?} and topic ID {topic_id:?}"
                )));
            }
            let entries = offsets.as_ref().ok_or_else(|| missing("offsets"))?;
            if topic.trim().is_empty() || topic_id.trim().is_empty() {
                return Err(CleanupError::InvalidMarker(format!(
                    "Recovery marker topic and topic ID must not be blank, but {label} has topic {topic:?} and topic ID {topic_id:?}"
                )));
            }
            crate::marker::check_topic_id(&topic_id)
                .map_err(|why| CleanupError::InvalidMarker(format!("{why} ({label})")))?;
            if entries.is_empty() {
                return Err(CleanupError::InvalidMarker(format!(
                    "Kafka recovery offsets must not be empty ({label})"
                )));
            }
            let mut map = PartitionOffsets::new();
            for &(partition, offset) in entries {
                let (Ok(p), Ok(o)) = (u32::try_from(partition), u64::try_from(offset)) else {
                    return Err(CleanupError::InvalidMarker(format!(
                        "Kafka partition and offset must be non-negative, but {label} has partition {partition} at offset {offset}"
                    )));
                };
                if map.get(p).is_some() {
                    return Err(CleanupError::InvalidMarker(format!(
                        "Recovery marker offsets name partition {p} twice ({label})"
                    )));
                }
                map.insert(p, o);
            }
            Ok(Marker::Versioned(VersionedMarker {
                topic,
                topic_id,
                offsets: map,
            }))
        }
    }
}

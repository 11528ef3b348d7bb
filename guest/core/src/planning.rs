//! Plan computation from the markers of one recovery point (SPEC §3).

use crate::error::{CleanupError, Result};
use crate::marker::{Marker, VersionedMarker};
use crate::offsets::{PartitionOffsets, format_partitions};
use crate::plan::{Plan, ZERO_TOPIC_ID};

/// The plan for `recovery_point`: per partition, the minimum offset any subtask still needs.
/// Every marker must be versioned and name the same physical topic and partition set.
pub fn plan_from_markers(recovery_point: &str, markers: &[Marker]) -> Result<Plan> {
    let invalid = CleanupError::InvalidMarker;
    let Some(first) = markers.first() else {
        return Err(invalid(format!(
            "Recovery markers must not be empty: recovery point {recovery_point:?} supplied none"
        )));
    };
    let first = versioned(first, 0)?;
    let mut minimum = first.offsets.clone();
    for (index, marker) in markers.iter().enumerate().skip(1) {
        let marker = versioned(marker, index)?;
        if marker.topic != first.topic || marker.topic_id != first.topic_id {
            return Err(invalid(format!(
                "Recovery markers do not reference one physical Kafka topic: marker 1 names {} (ID {}) but marker {} names {} (ID {})",
                first.topic,
                first.topic_id,
                index + 1,
                marker.topic,
                marker.topic_id
            )));
        }
        if !marker.offsets.same_partitions(&minimum) {
            return Err(invalid(format!(
                "Recovery markers contain different Kafka partition sets: marker 1 has {} but marker {} has {}",
                format_partitions(&minimum.partitions()),
                index + 1,
                format_partitions(&marker.offsets.partitions())
            )));
        }
        merge_minimum(&mut minimum, &marker.offsets);
    }
    Plan::new(recovery_point, &first.topic, &first.topic_id, minimum)
}

/// Parses marker texts, naming the marker's position (1-based) in any error.
pub fn parse_markers<S: AsRef<str>>(markers: &[S]) -> Result<Vec<Marker>> {
    markers
        .iter()
        .enumerate()
        .map(|(index, text)| {
            Marker::parse(text.as_ref()).map_err(|error| match error {
                CleanupError::InvalidMarker(why) => {
                    CleanupError::InvalidMarker(format!("marker {}: {why}", index + 1))
                }
                other => other,
            })
        })
        .collect()
}

/// Lowers every partition of `into` to `other`'s offset where that is smaller.
pub fn merge_minimum(into: &mut PartitionOffsets, other: &PartitionOffsets) {
    for (partition, offset) in other.iter() {
        let slot = into.0.entry(partition).or_insert(offset);
        *slot = (*slot).min(offset);
    }
}

fn versioned(marker: &Marker, index: usize) -> Result<&VersionedMarker> {
    match marker {
        Marker::Versioned(marker) if marker.topic_id == ZERO_TOPIC_ID => {
            Err(CleanupError::InvalidMarker(format!(
                "Checkpoint-aligned cleanup requires a broker-provided Kafka topic ID, but marker {} names topic {} with the unknown ID {ZERO_TOPIC_ID}",
                index + 1,
                marker.topic
            )))
        }
        Marker::Versioned(marker) => Ok(marker),
        Marker::Legacy(offsets) => Err(CleanupError::InvalidMarker(format!(
            "Checkpoint-aligned cleanup requires versioned Kafka recovery markers; marker {} is a legacy marker {offsets} without a physical topic identity",
            index + 1
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(topic_id: &str, pairs: &[(u32, u64)]) -> Marker {
        Marker::Versioned(VersionedMarker {
            topic: "action-state".into(),
            topic_id: topic_id.into(),
            offsets: pairs.iter().copied().collect(),
        })
    }

    #[test]
    fn uses_per_partition_minimum_across_union_markers() {
        let plan = plan_from_markers(
            "checkpoint-42",
            &[
                marker("id", &[(0, 15), (1, 30)]),
                marker("id", &[(0, 10), (1, 35)]),
            ],
        )
        .unwrap();
        assert_eq!(plan.offsets.to_string(), "{0=10, 1=30}");
        assert_eq!(plan.source_recovery_point, "checkpoint-42");
        assert_eq!(plan.plan_id.len(), 64);
    }

    #[test]
    fn a_marker_with_the_zero_topic_id_is_an_invalid_marker_named_by_position() {
        let zero = "AAAAAAAAAAAAAAAAAAAAAA";
        let error = plan_from_markers("rp", &[marker(zero, &[(0, 1)])]).unwrap_err();
        assert!(matches!(error, CleanupError::InvalidMarker(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "Checkpoint-aligned cleanup requires a broker-provided Kafka topic ID, but marker 1 names topic action-state with the unknown ID AAAAAAAAAAAAAAAAAAAAAA"
        );
    }

    #[test]
    fn refuses_legacy_markers_for_destructive_cleanup() {
        let legacy = Marker::Legacy([(0, 10)].into_iter().collect());
        let error = plan_from_markers("rp", &[legacy]).unwrap_err().to_string();
        assert!(
            error.contains("requires versioned Kafka recovery markers"),
            "{error}"
        );
    }

    #[test]
    fn refuses_zero_topic_id_other_topics_partition_sets_and_empty_input() {
        let zero = plan_from_markers("rp", &[marker("AAAAAAAAAAAAAAAAAAAAAA", &[(0, 1)])]);
        assert!(
            zero.unwrap_err()
                .to_string()
                .contains("broker-provided Kafka topic ID")
        );
        let other = plan_from_markers("rp", &[marker("id", &[(0, 1)]), marker("other", &[(0, 1)])]);
        assert!(
            other
                .unwrap_err()
                .to_string()
                .contains("one physical Kafka topic")
        );
        let parts = plan_from_markers(
            "rp",
            &[marker("id", &[(0, 10), (1, 20)]), marker("id", &[(0, 10)])],
        );
        assert!(
            parts
                .unwrap_err()
                .to_string()
                .contains("different Kafka partition sets")
        );
        assert!(
            plan_from_markers("rp", &[])
                .unwrap_err()
                .to_string()
                .contains("must not be empty")
        );
    }
}

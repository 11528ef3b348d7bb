//! Plan computation from the markers of one recovery point (SPEC §3).

use crate::decode::{self, MarkerParts};
use crate::error::{CleanupError, Result};
use crate::marker::{Marker, VersionedMarker};
use crate::offsets::{PartitionOffsets, brief_partitions, partition_difference};
use crate::plan::{Plan, ZERO_TOPIC_ID};

/// The plan for `recovery_point`: per partition, the minimum offset any subtask still needs.
/// Every marker must be versioned and name the same physical topic and partition set.
pub fn plan_from_markers(recovery_point: &str, markers: &[Marker]) -> Result<Plan> {
    plan_from_labelled_markers(recovery_point, markers, position)
}

/// `plan_from_markers` where refusals name each marker by `label(index)` ("marker 2" for
/// texts, a subtask and state element for markers read from a Flink snapshot).
pub fn plan_from_labelled_markers(
    recovery_point: &str,
    markers: &[Marker],
    label: impl Fn(usize) -> String,
) -> Result<Plan> {
    let Some((first, rest)) = markers.split_first() else {
        return Err(no_markers(recovery_point));
    };
    let mut agreement = Agreement::start(first, label(0))?;
    for (index, marker) in rest.iter().enumerate() {
        agreement.add(&label(index + 1), marker)?;
    }
    agreement.plan(recovery_point)
}

/// The label of a marker text: its 1-based position.
fn position(index: usize) -> String {
    format!("marker {}", index + 1)
}

/// The plan of one recovery point from its marker texts: exactly
/// `plan_from_markers(recovery_point, &parse_markers(markers)?)`, answers and messages alike,
/// but for the everyday case (versioned markers of one topic and one partition set, without
/// escapes) each marker is decoded straight into the running minimum, with no map per marker.
pub fn plan_from_marker_texts<S: AsRef<str>>(recovery_point: &str, markers: &[S]) -> Result<Plan> {
    let mut planner = MarkerPlanner::new();
    for text in markers {
        planner.add(text.as_ref());
    }
    planner.finish(recovery_point).map(|(plan, _)| plan)
}

/// `plan_from_marker_texts` over marker texts handed over one at a time, keeping only the
/// running minimum: a caller never needs every marker text in memory at once.
///
/// A refusal is kept until `finish`, where it outranks exactly as in `plan_from_markers` after
/// `parse_markers`: the first marker that does not parse, else the first planning refusal.
#[derive(Debug, Default)]
pub struct MarkerPlanner {
    markers: usize,
    agreement: Option<Agreement>,
    parse_error: Option<CleanupError>,
    plan_error: Option<CleanupError>,
}

impl MarkerPlanner {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, text: &str) {
        self.add_labelled(text, position);
    }

    /// `add` where a refusal names the marker by `label(index)` (index: 0-based among all
    /// markers added) instead of "marker N": a marker file's name and line, say. The label is
    /// only made when the marker is refused or is the first.
    pub fn add_labelled(&mut self, text: &str, label: impl Fn(usize) -> String) {
        let foldable =
            self.agreement.is_some() && self.parse_error.is_none() && self.plan_error.is_none();
        let parts = foldable.then(|| decode::marker_parts(text)).flatten();
        self.add_decoded(text, parts, label);
    }

    /// `add_labelled` for a text the caller already gave the fast decoder, whose answer is
    /// `parts`.
    pub(crate) fn add_decoded(
        &mut self,
        text: &str,
        parts: Option<MarkerParts<'_>>,
        label: impl Fn(usize) -> String,
    ) {
        let index = self.markers;
        self.markers += 1;
        if self.parse_error.is_some() {
            // Only an earlier marker's refusal can be reported now.
            return;
        }
        // The everyday case: one more marker of the first one's topic and partitions.
        if self.plan_error.is_none()
            && let Some(agreement) = self.agreement.as_mut()
            && let Some(parts) = &parts
            && agreement.fold(parts)
        {
            return;
        }
        let marker = match decode::marker(text).map_or_else(|| Marker::parse(text), Ok) {
            Ok(marker) => marker,
            Err(error) => {
                self.parse_error = Some(labelled(&label(index), error));
                return;
            }
        };
        if self.plan_error.is_some() {
            return;
        }
        let agreed = match self.agreement.as_mut() {
            None => Agreement::start(&marker, label(index))
                .map(|agreement| self.agreement = Some(agreement)),
            Some(agreement) => agreement.add(&label(index), &marker),
        };
        self.plan_error = agreed.err();
    }

    /// The plan of every marker added, and how many there were.
    pub fn finish(self, recovery_point: &str) -> Result<(Plan, usize)> {
        if let Some(error) = self.parse_error.or(self.plan_error) {
            return Err(error);
        }
        let Some(agreement) = self.agreement else {
            return Err(no_markers(recovery_point));
        };
        Ok((agreement.plan(recovery_point)?, self.markers))
    }
}

fn no_markers(recovery_point: &str) -> CleanupError {
    CleanupError::InvalidMarker(format!(
        "Recovery markers must not be empty: recovery point {recovery_point:?} supplied none"
    ))
}

/// What the markers so far agree on (SPEC §3): the first marker's topic and ID, its partition
/// set, and the running per-partition minimum, in ascending partition order.
#[derive(Debug)]
struct Agreement {
    /// How refusals name the first marker.
    first: String,
    topic: String,
    topic_id: String,
    minimum: Vec<(u32, u64)>,
}

impl Agreement {
    /// Starts from the first marker, which must be versioned with a real topic ID.
    fn start(marker: &Marker, label: String) -> Result<Self> {
        let first = versioned(marker, &label)?;
        Ok(Agreement {
            first: label,
            topic: first.topic.clone(),
            topic_id: first.topic_id.clone(),
            minimum: first.offsets.iter().collect(),
        })
    }

    /// Takes one more marker, refusing what `plan_from_markers` refuses.
    fn add(&mut self, label: &str, marker: &Marker) -> Result<()> {
        let marker = versioned(marker, label)?;
        if marker.topic != self.topic || marker.topic_id != self.topic_id {
            return Err(CleanupError::InvalidMarker(format!(
                "Recovery markers do not reference one physical Kafka topic: {} names {} (ID {}) but {label} names {} (ID {})",
                self.first, self.topic, self.topic_id, marker.topic, marker.topic_id
            )));
        }
        let same_partitions = marker.offsets.len() == self.minimum.len()
            && marker
                .offsets
                .0
                .keys()
                .eq(self.minimum.iter().map(|(p, _)| p));
        if !same_partitions {
            let partitions: Vec<u32> = self.minimum.iter().map(|(p, _)| *p).collect();
            return Err(CleanupError::InvalidMarker(format!(
                "Recovery markers contain different Kafka partition sets: {} has {} but {label} has {}{}",
                self.first,
                brief_partitions(&partitions),
                brief_partitions(&marker.offsets.partitions()),
                partition_difference(&partitions, &marker.offsets.partitions())
            )));
        }
        for (slot, offset) in self.minimum.iter_mut().zip(marker.offsets.0.values()) {
            slot.1 = slot.1.min(*offset);
        }
        Ok(())
    }

    /// Takes a marker decoded by the fast decoder when it names the same topic, ID and
    /// partitions; `false` (nothing changed) otherwise. Its topic and ID equal the first
    /// marker's, which was checked, and the decoder refuses out-of-range values: such a marker
    /// is one that `Marker::parse` accepts and `add` takes.
    fn fold(&mut self, parts: &MarkerParts<'_>) -> bool {
        let agrees = parts.topic == self.topic
            && parts.topic_id == self.topic_id
            && parts.offsets.len() == self.minimum.len()
            && parts
                .offsets
                .iter()
                .zip(&self.minimum)
                .all(|((p, _), (q, _))| p == q);
        if agrees {
            for (slot, (_, offset)) in self.minimum.iter_mut().zip(&parts.offsets) {
                slot.1 = slot.1.min(*offset);
            }
        }
        agrees
    }

    fn plan(self, recovery_point: &str) -> Result<Plan> {
        let minimum = PartitionOffsets(self.minimum.into_iter().collect());
        Plan::new(recovery_point, &self.topic, &self.topic_id, minimum)
    }
}

/// Parses marker texts, naming the marker's position (1-based) in any error.
pub fn parse_markers<S: AsRef<str>>(markers: &[S]) -> Result<Vec<Marker>> {
    markers
        .iter()
        .enumerate()
        .map(|(index, text)| Marker::parse(text.as_ref()).map_err(|e| numbered(index, e)))
        .collect()
}

/// A marker's refusal, naming its position (1-based) among the markers.
fn numbered(index: usize, error: CleanupError) -> CleanupError {
    labelled(&position(index), error)
}

/// A marker's refusal, naming the marker.
fn labelled(label: &str, error: CleanupError) -> CleanupError {
    match error {
        CleanupError::InvalidMarker(why) => CleanupError::InvalidMarker(format!("{label}: {why}")),
        other => other,
    }
}

/// Lowers every partition of `into` to `other`'s offset where that is smaller.
pub fn merge_minimum(into: &mut PartitionOffsets, other: &PartitionOffsets) {
    // The same partitions (every marker of a plan): one pass in step, no lookups. Where the
    // partitions part, the general loop below finishes (taking a minimum twice changes nothing).
    if into.len() == other.len() {
        let mut same = true;
        for ((p, slot), (q, offset)) in into.0.iter_mut().zip(other.0.iter()) {
            if p != q {
                same = false;
                break;
            }
            *slot = (*slot).min(*offset);
        }
        if same {
            return;
        }
    }
    for (partition, offset) in other.iter() {
        let slot = into.0.entry(partition).or_insert(offset);
        *slot = (*slot).min(offset);
    }
}

fn versioned<'m>(marker: &'m Marker, label: &str) -> Result<&'m VersionedMarker> {
    match marker {
        Marker::Versioned(marker) if marker.topic_id == ZERO_TOPIC_ID => {
            Err(CleanupError::InvalidMarker(format!(
                "Checkpoint-aligned cleanup requires a broker-provided Kafka topic ID, but {label} names topic {} with the unknown ID {ZERO_TOPIC_ID}",
                marker.topic
            )))
        }
        Marker::Versioned(marker) => Ok(marker),
        Marker::Legacy(offsets) => Err(CleanupError::InvalidMarker(format!(
            "Checkpoint-aligned cleanup requires versioned Kafka recovery markers; {label} is a legacy marker {} without a physical topic identity",
            offsets.brief()
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

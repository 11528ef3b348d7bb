//! The status query: a control topic's history, its effective boundary and the live data topic.

pub use crate::recovery::broken_history;
use crate::recovery::read_history;
use action_state_format::control::ControlRecord;
use action_state_format::control_history::PlanTimes;
use action_state_format::error::Result;
use action_state_format::marker::VersionedMarker;
use action_state_format::offsets::PartitionOffsets;
use action_state_format::topic_id::{NO_TOPIC_IDS, ZERO_TOPIC_ID};
use action_state_kafka::capabilities::Capabilities;
use action_state_kafka::kafka_types;
use action_state_kafka::policy::Policy;

/// Live state of one data-topic partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LivePartition {
    pub partition: u32,
    pub beginning: u64,
    pub end: u64,
    /// The effective boundary on this partition.
    pub boundary: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusReport {
    pub control_topic: String,
    /// Every known plan with its latest status, in first-seen order.
    pub operations: Vec<ControlRecord>,
    /// When each operation was COMMITTED and APPLIED, in the order of `operations`.
    pub times: Vec<PlanTimes>,
    pub boundary: PartitionOffsets,
    /// Per partition of `boundary`, ascending: the plan whose offset the boundary is (the first
    /// seen when several hold it), so the recovery point it came from can be named.
    pub boundary_origins: Vec<(u32, String)>,
    /// The data topic the history is about (none while the history is empty).
    pub topic: Option<String>,
    pub topic_id: Option<String>,
    /// The live topic's ID; differs from `topic_id` when the topic was recreated.
    pub live_topic_id: Option<String>,
    pub live: Vec<LivePartition>,
    /// Set when the live topic begins past the committed boundary somewhere: the sentence.
    pub broken_history: Option<String>,
}

/// Reads and validates the control topic, then the live ranges of the data topic it governs.
pub fn status<C: Capabilities>(kafka: &mut Policy<C>, control_topic: &str) -> Result<StatusReport> {
    if control_topic.trim().is_empty() {
        return Err(action_state_format::error::CleanupError::InvalidArgument(
            "Kafka action-state cleanup control topic must not be blank".into(),
        ));
    }
    let history = read_history(kafka, control_topic)?;
    let mut report = StatusReport {
        control_topic: control_topic.to_owned(),
        operations: history.operations().to_vec(),
        times: history.times().to_vec(),
        boundary: history.boundary(),
        boundary_origins: Vec::new(),
        topic: None,
        topic_id: None,
        live_topic_id: None,
        live: Vec::new(),
        broken_history: None,
    };
    report.boundary_origins = boundary_origins(history.operations(), &report.boundary);
    let Some(first) = history.operations().first() else {
        return Ok(report);
    };
    let plan = &first.plan;
    let partitions = plan.offsets.partitions();
    history.check_dedicated(&plan.topic, &plan.topic_id, &partitions)?;
    report.topic = Some(plan.topic.clone());
    report.topic_id = Some(plan.topic_id.clone());
    // Identity and ranges in one request.
    let live = kafka
        .inspect_ranges(&[&plan.topic], &[])?
        .into_iter()
        .next()
        .flatten();
    let Some(live) = live else {
        return Ok(report);
    };
    report.live_topic_id = Some(live.description.topic_id.clone());
    let beginnings = kafka_types::beginnings(&live.ranges);
    let ends = kafka_types::ends(&live.ranges);
    report.live = live
        .description
        .partitions
        .iter()
        .map(|&p| LivePartition {
            partition: p,
            beginning: beginnings.get(p).unwrap_or(0),
            end: ends.get(p).unwrap_or(0),
            boundary: report.boundary.get(p).unwrap_or(0),
        })
        .collect();
    if live.description.topic_id == plan.topic_id {
        let past: Vec<(u32, u64, u64)> = report
            .live
            .iter()
            .filter(|l| l.beginning > l.boundary)
            .map(|l| (l.partition, l.beginning, l.boundary))
            .collect();
        report.broken_history = broken_history(&plan.topic, control_topic, &past);
    }
    Ok(report)
}

/// Per partition of `boundary`, the first operation holding exactly its offset there.
fn boundary_origins(
    operations: &[ControlRecord],
    boundary: &PartitionOffsets,
) -> Vec<(u32, String)> {
    boundary
        .iter()
        .filter_map(|(partition, offset)| {
            operations
                .iter()
                .find(|op| op.plan.offsets.get(partition) == Some(offset))
                .map(|op| (partition, op.plan.plan_id.clone()))
        })
        .collect()
}

/// The versioned marker of `topic` as of now: its ID and the end offset of every partition,
/// from one describe.
pub fn snapshot_marker<C: Capabilities>(
    kafka: &mut Policy<C>,
    topic: &str,
) -> Result<VersionedMarker> {
    let state = kafka
        .inspect_ranges(&[topic], &[])?
        .into_iter()
        .next()
        .flatten()
        .ok_or_else(|| {
            action_state_format::error::CleanupError::InvalidArgument(format!(
                "Kafka topic {topic} does not exist"
            ))
        })?;
    let ends = kafka_types::ends(&state.ranges);
    let live = state.description;
    if live.topic_id == ZERO_TOPIC_ID {
        return Err(action_state_format::error::CleanupError::InvalidArgument(
            format!(
                "Kafka topic {topic} has the all-zero topic ID {ZERO_TOPIC_ID}: {NO_TOPIC_IDS}, and a marker without its topic's ID could never authorise a cleanup"
            ),
        ));
    }
    if !ends.has_partitions(&live.partitions) {
        return Err(action_state_format::error::CleanupError::kafka(
            "list-offsets",
            format!(
                "Kafka topic {topic} returned end offsets for partitions {}, expected {}{}",
                action_state_format::offsets::brief_partitions(&ends.partitions()),
                action_state_format::offsets::brief_partitions(&live.partitions),
                action_state_format::offsets::partition_difference(
                    &ends.partitions(),
                    &live.partitions
                )
            ),
        ));
    }
    VersionedMarker::new(topic, &live.topic_id, ends)
}

#[cfg(test)]
mod tests {
    use super::snapshot_marker;
    use action_state_format::error::CleanupError;
    use action_state_format::plan::ZERO_TOPIC_ID;
    use action_state_kafka::fake::{DATA, FakeCaps, TOPIC_ID};

    #[test]
    fn a_marker_names_the_live_topic_id_and_every_end() {
        let kafka = FakeCaps::new();
        let marker = snapshot_marker(&mut kafka.policy(), DATA).unwrap();
        assert_eq!(marker.topic_id, TOPIC_ID);
        assert_eq!(marker.offsets.to_string(), "{0=1000, 1=1000}");
    }

    /// Kafka before 2.8, or with inter.broker.protocol.version below 2.8, answers the all-zero
    /// topic ID: a marker with it could never authorise a cleanup, so none is written.
    #[test]
    fn a_marker_is_refused_when_the_broker_reports_no_topic_ids() {
        let kafka = FakeCaps::new();
        kafka.data().topic_id = ZERO_TOPIC_ID.into();
        let error = snapshot_marker(&mut kafka.policy(), DATA).unwrap_err();
        assert!(
            matches!(error, CleanupError::InvalidArgument(_)),
            "{error:?}"
        );
        let message = error.to_string();
        for part in [
            DATA,
            ZERO_TOPIC_ID,
            "the broker reports no topic IDs",
            "Kafka 2.8 or later with inter.broker.protocol.version 2.8 or later is needed",
        ] {
            assert!(message.contains(part), "{part:?} missing from {message}");
        }
    }
}

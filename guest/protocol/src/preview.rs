//! What a plan would delete if it were applied now: a read-only review for the operator before
//! any apply (the CLI's `plan --bootstrap-servers`). It checks the data topic's identity and
//! reads each partition's range; it reads no control topic, so the deletion shown is the plan's
//! own (an apply that finds a higher committed boundary on a partition refuses the plan).

use std::collections::BTreeMap;

use crate::apply::PartitionPreview;
use action_state_format::error::{CleanupError, RangeViolation, Result};
use action_state_format::plan::Plan;
use action_state_kafka::capabilities::Capabilities;
use action_state_kafka::policy::Policy;
use action_state_kafka::topics::check_identity;

/// Per partition of `plan`: the live beginning and end, the plan offset (as `boundary`) and how
/// many records below it Kafka would discard. Errors: `topic-changed` when the live topic is not
/// the plan's (missing, recreated, other partitions), `offsets-unavailable` when a plan offset
/// lies outside [beginning, end], `kafka`.
pub fn preview_plan<C: Capabilities>(
    kafka: &mut Policy<C>,
    plan: &Plan,
) -> Result<Vec<PartitionPreview>> {
    plan.verify()?;
    let partitions = plan.offsets.partitions();
    let live = kafka
        .describe_topics(&[&plan.topic])?
        .into_iter()
        .next()
        .flatten();
    check_identity(
        &plan.topic,
        &plan.topic_id,
        &partitions,
        live.as_ref(),
        "checked for the plan's preview",
    )?;
    let ranges: BTreeMap<u32, (u64, u64)> = kafka
        .offset_range(&plan.topic, &partitions)?
        .into_iter()
        .map(|r| (r.partition, (r.beginning, r.end)))
        .collect();
    let mut preview = Vec::with_capacity(partitions.len());
    for (partition, offset) in plan.offsets.iter() {
        let range = ranges.get(&partition);
        let (beginning, end) = (range.map(|r| r.0), range.map(|r| r.1));
        match (beginning, end) {
            (Some(beginning), Some(end)) if beginning <= offset && offset <= end => {
                preview.push(PartitionPreview {
                    partition,
                    beginning,
                    boundary: offset,
                    end,
                    records_to_delete: offset - beginning,
                });
            }
            _ => {
                return Err(CleanupError::OffsetsUnavailable(RangeViolation {
                    topic: plan.topic.clone(),
                    partition,
                    requested: offset,
                    beginning,
                    end,
                }));
            }
        }
    }
    Ok(preview)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use action_state_kafka::fake::FakeCaps;

    #[test]
    fn the_preview_counts_the_records_below_each_plan_offset_and_writes_nothing() {
        let kafka = FakeCaps::new();
        kafka.data().beginnings.insert(0, 4);
        let plan = crate::apply_tests::plan("rp", 10, 20);
        let preview = preview_plan(&mut kafka.policy(), &plan).unwrap();
        let rows: Vec<(u32, u64, u64, u64)> = preview
            .iter()
            .map(|p| (p.partition, p.beginning, p.boundary, p.records_to_delete))
            .collect();
        assert_eq!(rows, [(0, 4, 10, 6), (1, 0, 20, 20)]);
        assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
        assert!(kafka.c().probes.is_empty(), "{:?}", kafka.c().probes);
    }

    #[test]
    fn a_plan_offset_below_the_beginning_is_refused_naming_the_range() {
        let kafka = FakeCaps::new();
        kafka.data().beginnings.insert(0, 11);
        let plan = crate::apply_tests::plan("rp", 10, 20);
        let error = preview_plan(&mut kafka.policy(), &plan).unwrap_err();
        assert!(
            error.to_string().contains("available range is [11, 1000]"),
            "{error}"
        );
    }
}

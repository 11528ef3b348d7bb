//! Boundary arithmetic (SPEC §4): effective boundary, advance and comparability.

use crate::error::{BoundaryRegression, CleanupError, Result};
use crate::offsets::{PartitionOffsets, brief_partitions, partition_difference};
use crate::plan::PlanFields;

/// The per-partition maximum over the offsets of every plan: COMMITTED and APPLIED are both
/// binding.
pub fn effective_boundary<'a>(
    plans: impl IntoIterator<Item = &'a PartitionOffsets>,
) -> PartitionOffsets {
    let mut boundary = PartitionOffsets::new();
    for offsets in plans {
        for (partition, offset) in offsets.iter() {
            let slot = boundary.0.entry(partition).or_insert(offset);
            *slot = (*slot).max(offset);
        }
    }
    boundary
}

/// True when `offsets` is at or above `boundary` on every partition of the same partition set
/// (an empty boundary is advanced by anything).
pub fn advances_or_equals(offsets: &PartitionOffsets, boundary: &PartitionOffsets) -> bool {
    boundary.is_empty()
        || (offsets.same_partitions(boundary)
            && boundary
                .iter()
                .all(|(p, b)| offsets.get(p).is_some_and(|o| o >= b)))
}

/// Two boundaries are comparable when one advances or equals the other.
pub fn comparable(a: &PartitionOffsets, b: &PartitionOffsets) -> bool {
    advances_or_equals(a, b) || advances_or_equals(b, a)
}

/// Refuses a plan that does not advance `boundary`, naming the first partition that would
/// move backwards (a different partition set is reported as such, not as a regression).
pub fn check_advances(plan: &PlanFields, boundary: &PartitionOffsets) -> Result<()> {
    if boundary.is_empty() {
        return Ok(());
    }
    if !plan.offsets.same_partitions(boundary) {
        return Err(CleanupError::InvalidPlan(format!(
            "Cleanup plan {} covers partitions {} but the committed boundary covers {}{}",
            plan.plan_id,
            brief_partitions(&plan.offsets.partitions()),
            brief_partitions(&boundary.partitions()),
            partition_difference(&plan.offsets.partitions(), &boundary.partitions())
        )));
    }
    for (partition, committed) in boundary.iter() {
        let planned = plan.offsets.get(partition).unwrap_or(0);
        if planned < committed {
            return Err(CleanupError::BoundaryRegression(BoundaryRegression {
                plan_id: plan.plan_id.clone(),
                partition,
                planned,
                boundary: committed,
            }));
        }
    }
    Ok(())
}

/// Per partition: (partition, from, to) where `from` is the boundary (0 when none yet).
pub fn advance_table(plan: &PlanFields, boundary: &PartitionOffsets) -> Vec<(u32, u64, u64)> {
    plan.offsets
        .iter()
        .map(|(p, to)| (p, boundary.get(p).unwrap_or(0), to))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::plan::Plan;

    fn plan(a: u64, b: u64) -> Plan {
        Plan::new("rp", "t", "id", [(0, a), (1, b)].into_iter().collect()).unwrap()
    }

    #[test]
    fn effective_boundary_is_the_per_partition_maximum() {
        let plans = [plan(10, 30), plan(20, 20)];
        assert_eq!(
            effective_boundary(plans.iter().map(|p| &p.offsets)).to_string(),
            "{0=20, 1=30}"
        );
        assert!(effective_boundary(&[]).is_empty());
    }

    #[test]
    fn backward_plans_are_refused_with_the_partition() {
        let error = check_advances(&plan(9, 20), &plan(10, 20).offsets).unwrap_err();
        assert!(matches!(
            error,
            CleanupError::BoundaryRegression(BoundaryRegression {
                partition: 0,
                planned: 9,
                boundary: 10,
                ..
            })
        ));
        assert!(error.to_string().contains("does not advance"));
        assert_eq!(check_advances(&plan(10, 20), &plan(10, 20).offsets), Ok(()));
    }

    #[test]
    fn incomparable_boundaries_are_detected() {
        assert!(!comparable(&plan(10, 30).offsets, &plan(20, 20).offsets));
        assert!(comparable(&plan(10, 20).offsets, &plan(20, 20).offsets));
    }
}

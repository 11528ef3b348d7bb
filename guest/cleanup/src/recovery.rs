//! The `recovery` export: the decision table at restore time, markers at checkpoint time.

use action_state_core as core;

use crate::Component;
use crate::bindings::action_state::cleanup::types::CleanupError;
use crate::bindings::exports::action_state::cleanup::recovery::{
    Guest, PartitionRange, RecoveryPolicy, RecoveryVerdict,
};
use crate::convert::from_offsets;
use crate::imports::HostKafka;

impl Guest for Component {
    fn check_recovery(
        markers: Vec<String>,
        policy: RecoveryPolicy,
    ) -> Result<RecoveryVerdict, CleanupError> {
        let markers = core::planning::parse_markers(&markers)?;
        let policy = core::recovery::RecoveryPolicy {
            topic: policy.topic,
            control_topic: policy.control_topic,
            tombstones_enabled: policy.tombstones_enabled,
        };
        let check = core::recovery::check_recovery(&mut HostKafka, &markers, &policy)?;
        Ok(RecoveryVerdict {
            topic: check.decision.topic,
            boundary: match check.decision.mode {
                core::recovery::RecoveryMode::Standard => None,
                core::recovery::RecoveryMode::Enforced { boundary } => {
                    Some(from_offsets(&boundary))
                }
            },
            versioned: check.decision.versioned,
            ranges: check
                .ranges
                .into_iter()
                .map(|(partition, requested, beginning, end)| PartitionRange {
                    partition,
                    requested,
                    beginning,
                    end,
                })
                .collect(),
        })
    }

    fn snapshot_marker(topic: String) -> Result<String, CleanupError> {
        let marker = core::status::snapshot_marker(&mut HostKafka, &topic)?;
        Ok(core::Marker::Versioned(marker).render())
    }
}

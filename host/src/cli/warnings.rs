//! What an apply warns about although it went on (`coordinator.apply-warning`): the sentence
//! for stderr and the typed fields for `--json`.

use action_state_cleanup::cleanup::ApplyWarning;
use serde_json::{Value, json};

/// The one sentence the component wrote for the warning.
pub fn message(warning: &ApplyWarning) -> &str {
    match warning {
        ApplyWarning::UnderReplicatedControlTopic(w) => &w.message,
        ApplyWarning::ReplicationUnchecked(message) => message,
    }
}

/// Shows each warning on stderr (stdout stays the outcome's).
pub fn show(warnings: &[ApplyWarning]) {
    for warning in warnings {
        errln!("warning: {}", message(warning));
    }
}

/// `warnings` of `apply --json`: each with its `kind` (the WIT case) and `message`, plus the
/// facts of an under-replicated control topic.
pub fn to_json(warnings: &[ApplyWarning]) -> Value {
    warnings
        .iter()
        .map(|warning| match warning {
            ApplyWarning::UnderReplicatedControlTopic(w) => json!({
                "kind": "under-replicated-control-topic",
                "message": w.message,
                "controlTopic": w.control_topic,
                "replicationFactor": w.replication_factor,
                "recommendedReplicationFactor": w.recommended_replication_factor,
                "recommendedMinInsyncReplicas": w.recommended_min_insync_replicas,
                "brokerCount": w.broker_count,
                "clusterDefaultReplicationFactor": w.cluster_default_replication_factor,
                "reassignment": w.reassignment,
            }),
            ApplyWarning::ReplicationUnchecked(message) => json!({
                "kind": "replication-unchecked",
                "message": message,
            }),
        })
        .collect()
}

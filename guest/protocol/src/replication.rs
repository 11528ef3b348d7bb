//! The control topic's replication: the production default a cluster calls for, and the warning
//! for a control topic that has fewer replicas. The component decides both; a host only reports
//! the brokers and their `default.replication.factor` (`kafka-admin.describe-cluster`), and only
//! the brokers decide: Kafka ships `default.replication.factor=1`, and a cluster left at it must
//! not keep every committed boundary on one disk.

use std::fmt::Write as _;

use action_state_format::error::{CleanupError, KafkaFailure};
use action_state_kafka::capabilities::Capabilities;
use action_state_kafka::policy::Policy;

/// Largest replication factor Kafka accepts for a topic (a Java `short`).
pub const MAX_REPLICATION_FACTOR: u16 = i16::MAX as u16;

/// The broker configuration that holds the cluster's own default replication factor.
pub const DEFAULT_REPLICATION_FACTOR: &str = "default.replication.factor";

/// The most replicas the production default asks for (on a cluster of at least that many
/// brokers, whatever its `default.replication.factor`). Three copies with `min.insync.replicas`
/// 2 keep every acknowledged COMMITTED record on two brokers while one broker may be down; more
/// copies of a few small records add nothing an operator would pay for.
pub const MAX_DEFAULT_REPLICATION_FACTOR: u16 = 3;

/// How a control topic is replicated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replication {
    pub replication_factor: u16,
    pub min_insync_replicas: u16,
}

/// `min.insync.replicas` for a replication factor: 2 from three replicas on, so that an
/// acks=all append (every COMMITTED record) is on two brokers before apply deletes anything,
/// while one broker may be down. With two replicas, 2 would stop every apply whenever either
/// broker is down, so 1.
pub fn min_insync_replicas(replication_factor: u16) -> u16 {
    if replication_factor >= 3 { 2 } else { 1 }
}

/// A replication factor chosen by the operator, with the `min.insync.replicas` that goes with it.
pub fn explicit(replication_factor: u16) -> Replication {
    Replication {
        replication_factor,
        min_insync_replicas: min_insync_replicas(replication_factor),
    }
}

/// What a cluster says about itself that decides the production default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterFacts {
    /// Broker IDs, ascending.
    pub brokers: Vec<u32>,
    /// The brokers' `default.replication.factor`: reported with a warning (it is why a control
    /// topic made without a factor has too few replicas), never what the default follows.
    pub default_replication_factor: u16,
}

impl ClusterFacts {
    /// Asks the cluster (one `describe-cluster`). A value of `default.replication.factor` that is
    /// missing or not a replication factor is refused: the choice would be a guess.
    pub fn read<C: Capabilities>(kafka: &mut Policy<C>) -> Result<ClusterFacts, KafkaFailure> {
        let cluster = kafka.describe_cluster(&[DEFAULT_REPLICATION_FACTOR])?;
        let value = cluster
            .configs
            .iter()
            .find(|entry| entry.name == DEFAULT_REPLICATION_FACTOR)
            .and_then(|entry| entry.value.as_deref());
        let factor = value
            .and_then(|v| v.trim().parse::<u16>().ok())
            .filter(|f| (1..=MAX_REPLICATION_FACTOR).contains(f));
        let Some(default_replication_factor) = factor else {
            return Err(KafkaFailure::new(
                "describe-cluster",
                format!(
                    "the cluster's brokers report {DEFAULT_REPLICATION_FACTOR}={}, which is not a replication factor between 1 and {}",
                    value.unwrap_or("(unset)"),
                    MAX_REPLICATION_FACTOR
                ),
                false,
            ));
        };
        Ok(ClusterFacts {
            brokers: cluster.brokers,
            default_replication_factor,
        })
    }

    pub fn broker_count(&self) -> u32 {
        u32::try_from(self.brokers.len()).unwrap_or(u32::MAX)
    }

    /// The production default: `MAX_DEFAULT_REPLICATION_FACTOR` replicas, or one per broker on a
    /// smaller cluster (a factor above the broker count could not be created), with the
    /// `min.insync.replicas` that goes with it; the cluster's `default.replication.factor` does
    /// not lower it.
    pub fn production_default(&self) -> Replication {
        let brokers = u16::try_from(self.brokers.len()).unwrap_or(u16::MAX);
        explicit(MAX_DEFAULT_REPLICATION_FACTOR.min(brokers).max(1))
    }
}

/// A control topic with fewer replicas than the production default for its cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnderReplicated {
    pub control_topic: String,
    /// Its replicas now.
    pub replication_factor: u16,
    pub recommended: Replication,
    pub broker_count: u32,
    pub cluster_default_replication_factor: u16,
    /// The document for `kafka-reassign-partitions --reassignment-json-file`.
    pub reassignment: String,
    /// The sentence to show, with the commands that fix it.
    pub message: String,
}

/// Something an apply found that the operator should fix, though the apply went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyWarning {
    UnderReplicatedControlTopic(UnderReplicated),
    /// Whether the control topic has enough replicas could not be checked; the sentence.
    ReplicationUnchecked(String),
}

impl ApplyWarning {
    /// The one sentence a host shows.
    pub fn message(&self) -> &str {
        match self {
            ApplyWarning::UnderReplicatedControlTopic(under) => &under.message,
            ApplyWarning::ReplicationUnchecked(message) => message,
        }
    }
}

/// The warning for `control_topic` with `replication_factor` replicas on a cluster with `facts`,
/// or `None` when it has at least the production default.
pub fn check(
    control_topic: &str,
    replication_factor: u16,
    facts: &ClusterFacts,
) -> Option<UnderReplicated> {
    let recommended = facts.production_default();
    if replication_factor >= recommended.replication_factor {
        return None;
    }
    let reassignment = reassignment(
        control_topic,
        &facts.brokers[..usize::from(recommended.replication_factor).min(facts.brokers.len())],
    );
    let plural = |n: u16| if n == 1 { "" } else { "s" };
    let message = format!(
        "Kafka cleanup control topic {control_topic} has {replication_factor} replica{} but a control topic needs {} on this cluster ({} brokers: {MAX_DEFAULT_REPLICATION_FACTOR} replicas, or one per broker when there are fewer): if the broker{} holding it fail{}, the committed boundaries every restore is checked against are lost. Nothing was refused; to add replicas, write {reassignment} to control-replicas.json and run kafka-reassign-partitions.sh --bootstrap-server <bootstrap> --reassignment-json-file control-replicas.json --execute, then kafka-configs.sh --bootstrap-server <bootstrap> --alter --entity-type topics --entity-name {control_topic} --add-config min.insync.replicas={} (add --command-config FILE on a secured cluster)",
        plural(replication_factor),
        recommended.replication_factor,
        facts.broker_count(),
        plural(replication_factor),
        if replication_factor == 1 { "s" } else { "" },
        recommended.min_insync_replicas,
    );
    Some(UnderReplicated {
        control_topic: control_topic.to_owned(),
        replication_factor,
        recommended,
        broker_count: facts.broker_count(),
        cluster_default_replication_factor: facts.default_replication_factor,
        reassignment,
        message,
    })
}

/// Whether the cluster refused its description to this principal (DescribeConfigs on the
/// cluster is what reading a broker's configuration needs).
fn refused(error: &KafkaFailure) -> bool {
    error.cause.as_ref().is_some_and(|cause| {
        cause.kind == action_state_kafka::capabilities::ErrorKind::Authorization
    })
}

/// The failure of an apply that must create `control_topic` with the production default but
/// could not describe the cluster: nothing is created, and the sentence names the ways out.
pub fn undecided(control_topic: &str, why: KafkaFailure) -> CleanupError {
    let grant = if refused(&why) {
        ", or grant the principal DescribeConfigs on the cluster"
    } else {
        ""
    };
    CleanupError::Kafka(KafkaFailure {
        message: format!(
            "choosing the replication factor of the new control topic {control_topic} needs the cluster's brokers and their {DEFAULT_REPLICATION_FACTOR}: {}; set replication-factor (CLI: --replication-factor N) to choose it{grant}",
            why.message
        ),
        ..why
    })
}

/// The warning when the cluster could not be described for the check.
pub fn unchecked(control_topic: &str, replication_factor: u16, why: &KafkaFailure) -> ApplyWarning {
    let grant = if refused(why) {
        "; grant the principal DescribeConfigs on the cluster to have it checked"
    } else {
        ""
    };
    ApplyWarning::ReplicationUnchecked(format!(
        "Whether Kafka cleanup control topic {control_topic} ({replication_factor} replica{}) has as many replicas as this cluster's production default was not checked: {}{grant}",
        if replication_factor == 1 { "" } else { "s" },
        why.message
    ))
}

/// `{"version":1,"partitions":[{"topic":T,"partition":0,"replicas":[…]}]}`.
fn reassignment(topic: &str, replicas: &[u32]) -> String {
    let mut out = String::from("{\"version\":1,\"partitions\":[{\"topic\":");
    action_state_format::json::write_string(&mut out, topic);
    out.push_str(",\"partition\":0,\"replicas\":[");
    for (i, broker) in replicas.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{broker}");
    }
    out.push_str("]}]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(brokers: u32, default: u16) -> ClusterFacts {
        ClusterFacts {
            brokers: (1..=brokers).collect(),
            default_replication_factor: default,
        }
    }

    fn default_for(brokers: u32, default: u16) -> (u16, u16) {
        let chosen = facts(brokers, default).production_default();
        (chosen.replication_factor, chosen.min_insync_replicas)
    }

    #[test]
    fn the_production_default_is_three_or_one_per_broker_whatever_the_cluster_default() {
        for default in [1, 2, 3, 5] {
            assert_eq!(default_for(1, default), (1, 1), "default {default}");
            assert_eq!(default_for(2, default), (2, 1), "default {default}");
            assert_eq!(default_for(3, default), (3, 2), "default {default}");
            assert_eq!(default_for(5, default), (3, 2), "default {default}");
        }
    }

    #[test]
    fn an_explicit_factor_gets_min_insync_replicas_two_from_three_replicas_on() {
        assert_eq!(explicit(1).min_insync_replicas, 1);
        assert_eq!(explicit(2).min_insync_replicas, 1);
        assert_eq!(explicit(3).min_insync_replicas, 2);
        assert_eq!(explicit(7).min_insync_replicas, 2);
    }

    #[test]
    fn a_control_topic_below_the_production_default_is_named_with_the_fix() {
        let warning = check("orders-cleanup", 1, &facts(3, 3)).expect("RF 1 of 3 warns");
        assert_eq!(warning.replication_factor, 1);
        assert_eq!(
            warning.recommended,
            Replication {
                replication_factor: 3,
                min_insync_replicas: 2
            }
        );
        assert_eq!(warning.broker_count, 3);
        assert_eq!(warning.cluster_default_replication_factor, 3);
        assert_eq!(
            warning.reassignment,
            r#"{"version":1,"partitions":[{"topic":"orders-cleanup","partition":0,"replicas":[1,2,3]}]}"#
        );
        for said in [
            "control topic orders-cleanup has 1 replica but a control topic needs 3 on this cluster (3 brokers: 3 replicas, or one per broker when there are fewer)",
            "if the broker holding it fails",
            "Nothing was refused",
            "kafka-reassign-partitions.sh --bootstrap-server <bootstrap> --reassignment-json-file control-replicas.json --execute",
            r#"write {"version":1,"partitions":[{"topic":"orders-cleanup","partition":0,"replicas":[1,2,3]}]} to control-replicas.json"#,
            "--entity-name orders-cleanup --add-config min.insync.replicas=2",
        ] {
            assert!(
                warning.message.contains(said),
                "{said:?} in {}",
                warning.message
            );
        }
        // Two replicas on five brokers: three of the lowest IDs.
        let five = ClusterFacts {
            brokers: vec![4, 7, 9, 11, 12],
            default_replication_factor: 3,
        };
        let warning = check("c", 2, &five).expect("RF 2 of 3 warns");
        assert!(warning.reassignment.contains("\"replicas\":[4,7,9]"));
        assert!(
            warning.message.contains("has 2 replicas"),
            "{}",
            warning.message
        );
        assert!(warning.message.contains("if the brokers holding it fail,"));
        // A cluster whose default.replication.factor is 1 (Kafka's own) is no excuse: the
        // warning comes, and reports that default for the operator.
        let warning = check("c", 1, &facts(3, 1)).expect("RF 1 of 3 warns whatever the default");
        assert_eq!(warning.recommended.replication_factor, 3);
        assert_eq!(warning.cluster_default_replication_factor, 1);
    }

    #[test]
    fn a_control_topic_with_the_production_default_or_more_is_not_named() {
        assert_eq!(check("c", 3, &facts(3, 3)), None);
        assert_eq!(check("c", 3, &facts(5, 3)), None);
        assert_eq!(check("c", 5, &facts(5, 5)), None);
        assert_eq!(check("c", 1, &facts(1, 3)), None);
        assert_eq!(check("c", 2, &facts(2, 3)), None);
        assert_eq!(check("c", 2, &facts(2, 1)), None);
    }
}

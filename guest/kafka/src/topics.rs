//! Checks of live topics: data-topic identity and configuration, control-topic shape.

use crate::kafka_types::{ConfigEntry, TopicDescription};
use action_state_format::error::{CleanupError, Result, TopicChange};

pub const CLEANUP_POLICY: &str = "cleanup.policy";
pub const RETENTION_MS: &str = "retention.ms";
pub const RETENTION_BYTES: &str = "retention.bytes";
/// The configuration names every check reads, in one request.
pub const CHECKED_CONFIGS: [&str; 3] = [CLEANUP_POLICY, RETENTION_MS, RETENTION_BYTES];

/// The live data topic must be the physical topic the plan or marker names.
pub fn check_identity(
    expected_topic: &str,
    expected_id: &str,
    expected_partitions: &[u32],
    found: Option<&TopicDescription>,
    context: &str,
) -> Result<()> {
    let (found_id, found_partitions) = match found {
        Some(d) => (d.topic_id.as_str(), d.partitions.as_slice()),
        None => ("", &[][..]),
    };
    if found_id == expected_id && found_partitions == expected_partitions {
        return Ok(());
    }
    Err(CleanupError::TopicChanged(Box::new(TopicChange {
        topic: expected_topic.to_owned(),
        context: context.to_owned(),
        expected_topic_id: expected_id.to_owned(),
        found_topic_id: found_id.to_owned(),
        expected_partitions: expected_partitions.to_vec(),
        found_partitions: found_partitions.to_vec(),
    })))
}

fn value_of<'a>(configs: &'a [ConfigEntry], name: &str) -> Option<&'a str> {
    configs
        .iter()
        .find(|entry| entry.name == name)
        .and_then(|entry| entry.value.as_deref())
}

/// Only reviewed plans may move the data topic's prefix: the policy must be the set
/// {compact, delete} and time and size retention must both be off.
pub fn check_data_topic_config(topic: &str, configs: &[ConfigEntry]) -> Result<()> {
    let policy = value_of(configs, CLEANUP_POLICY);
    let retention_ms = value_of(configs, RETENTION_MS);
    let retention_bytes = value_of(configs, RETENTION_BYTES);
    let mut policies: Vec<&str> = policy
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    policies.sort_unstable();
    policies.dedup();
    let safe = policies == ["compact", "delete"]
        && retention_ms == Some("-1")
        && retention_bytes == Some("-1");
    if safe {
        return Ok(());
    }
    let shown = |v: Option<&str>| v.unwrap_or("(unset)").to_owned();
    Err(CleanupError::UnsafeTopicConfig(format!(
        "Kafka action-state topic {topic} must use cleanup.policy=compact,delete with retention.ms=-1 and retention.bytes=-1 before checkpoint-aligned cleanup can be committed, but has cleanup.policy={}, retention.ms={}, retention.bytes={}",
        shown(policy),
        shown(retention_ms),
        shown(retention_bytes)
    )))
}

/// The control topic holds one job's history forever: one partition, compaction only.
pub fn check_control_topic(
    topic: &str,
    description: &TopicDescription,
    configs: &[ConfigEntry],
) -> Result<()> {
    if description.partitions != [0] {
        return Err(CleanupError::InvalidControlTopic(format!(
            "Kafka cleanup control topic {topic} must have exactly one partition, but has {}",
            description.partitions.len()
        )));
    }
    let policy = value_of(configs, CLEANUP_POLICY);
    if policy != Some("compact") {
        return Err(CleanupError::InvalidControlTopic(format!(
            "Kafka cleanup control topic {topic} must use cleanup.policy=compact without delete retention, but has cleanup.policy={}",
            policy.unwrap_or("(unset)")
        )));
    }
    Ok(())
}

/// The control topic must be a real, separate topic name.
pub fn check_control_topic_name(control_topic: &str, data_topic: &str) -> Result<()> {
    if control_topic.trim().is_empty() {
        return Err(CleanupError::InvalidArgument(
            "Kafka action-state cleanup control topic must not be blank".into(),
        ));
    }
    if control_topic == data_topic {
        return Err(CleanupError::InvalidArgument(format!(
            "Kafka action-state cleanup control topic must differ from the data topic, but both are {data_topic}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configs(policy: &str, ms: &str, bytes: &str) -> Vec<ConfigEntry> {
        [
            (CLEANUP_POLICY, policy),
            (RETENTION_MS, ms),
            (RETENTION_BYTES, bytes),
        ]
        .into_iter()
        .map(|(n, v)| ConfigEntry {
            name: n.into(),
            value: Some(v.into()),
        })
        .collect()
    }

    #[test]
    fn data_topic_requires_explicit_deletion_without_automatic_retention() {
        assert_eq!(
            check_data_topic_config("t", &configs("delete, compact", "-1", "-1")),
            Ok(())
        );
        let compact = check_data_topic_config("t", &configs("compact", "-1", "-1")).unwrap_err();
        assert!(
            compact
                .to_string()
                .contains("cleanup.policy=compact,delete")
        );
        let ms = check_data_topic_config("t", &configs("compact,delete", "604800000", "-1"))
            .unwrap_err();
        assert!(ms.to_string().contains("retention.ms=604800000"));
        let bytes =
            check_data_topic_config("t", &configs("compact,delete", "-1", "1048576")).unwrap_err();
        assert!(bytes.to_string().contains("retention.bytes=1048576"));
        assert!(check_data_topic_config("t", &[]).is_err());
    }

    #[test]
    fn control_topic_requires_compaction_only_and_one_partition() {
        let one = TopicDescription {
            topic: "c".into(),
            topic_id: "x".into(),
            partitions: vec![0],
        };
        assert_eq!(
            check_control_topic("c", &one, &configs("compact", "", "")),
            Ok(())
        );
        let error = check_control_topic("c", &one, &configs("compact,delete", "", "")).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cleanup.policy=compact without delete retention")
        );
        let two = TopicDescription {
            partitions: vec![0, 1],
            ..one
        };
        assert!(
            check_control_topic("c", &two, &configs("compact", "", ""))
                .unwrap_err()
                .to_string()
                .contains("exactly one partition")
        );
    }

    #[test]
    fn control_topic_must_differ_from_data_topic() {
        assert!(
            check_control_topic_name("a", "a")
                .unwrap_err()
                .to_string()
                .contains("must differ")
        );
        assert!(
            check_control_topic_name(" ", "a")
                .unwrap_err()
                .to_string()
                .contains("blank")
        );
    }
}

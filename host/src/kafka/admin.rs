//! `kafka-admin`: one request (or one batch of concurrent requests) per call, no retries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::types::RDKafkaErrorCode;

use super::client_log::ClientLog;
use crate::trace;

use super::errors::{ErrorKind, KafkaResult, from_code, from_rd, invalid};
use super::ffi;

// Kept reachable here, where it was defined before `delete_records` held the DeleteRecords call.
pub use super::delete_records::DELETE_PARTITIONS_PER_REQUEST;

/// librdkafka's `RD_KAFKA_RESP_ERR__NOENT`.
const NO_ENTRY: i32 = -156;

/// One existing topic as `describe` answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    pub topic: String,
    pub topic_id: String,
    pub partitions: Vec<u32>,
    /// (name, value) per requested name, in order.
    pub configs: Vec<(String, Option<String>)>,
    /// (partition, beginning, last stable offset) per partition, when asked for.
    pub offsets: Vec<(u32, u64, u64)>,
    /// The smallest replica count over the partitions.
    pub replication_factor: u16,
}

/// The cluster as `describe-cluster` answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterInfo {
    /// Broker IDs, ascending.
    pub brokers: Vec<u32>,
    /// (name, value) per requested name, in order, of the broker with the lowest ID.
    pub configs: Vec<(String, Option<String>)>,
}

/// The admin client and the runtime its futures run on.
pub struct Admin {
    pub(crate) client: AdminClient<ClientLog>,
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) timeout: Duration,
    /// Set by an answer that said a partition's leader moved or could not be reached.
    pub(crate) stale_leaders: AtomicBool,
}

impl Admin {
    /// librdkafka sends each request to the broker its metadata cache names (a partition's
    /// leader, or the "controller" for DescribeTopics, DescribeConfigs and CreateTopics), and a
    /// broker that died stays there until the cache is refreshed: every later request would wait
    /// for it until its timeout. So after an answer that says the cache may be stale (not leader,
    /// transport, timed out) the next call first re-reads the cluster's metadata once; the
    /// component's next attempt (it alone decides whether and when) then reaches the brokers the
    /// cluster has now. This is no retry: each call still sends its own request exactly once.
    pub(super) fn refresh_if_stale(&self, topic: Option<&str>) -> KafkaResult<()> {
        if self.stale_leaders.swap(false, Ordering::Relaxed) {
            self.client
                .inner()
                .fetch_metadata(topic, self.timeout)
                .map_err(|e| {
                    // For want of a broker: the reason the client last gave (the address, a
                    // name that does not resolve, a refused connection) says more.
                    let error = from_rd(&e);
                    let error = match ffi::unreachable_cause(self.client.inner().native_ptr()) {
                        Some(cause) if error.kind.is_transient() => cause.into(),
                        _ => error,
                    };
                    self.noted(error)
                })?;
        }
        Ok(())
    }

    /// Remembers that the cached brokers may be stale when an error says so.
    pub(super) fn noted(&self, error: super::errors::KafkaError) -> super::errors::KafkaError {
        if matches!(
            error.kind,
            ErrorKind::NotLeader | ErrorKind::Transport | ErrorKind::Timeout
        ) {
            self.stale_leaders.store(true, Ordering::Relaxed);
        }
        error
    }

    fn options(&self) -> AdminOptions {
        AdminOptions::new()
            .request_timeout(Some(self.timeout))
            .operation_timeout(Some(self.timeout))
    }

    /// Metadata and configuration concurrently, then offsets of the topics found.
    pub fn describe(
        &self,
        topics: &[String],
        names: &[String],
        with_offsets: bool,
    ) -> KafkaResult<Vec<Option<TopicInfo>>> {
        self.refresh_if_stale(topics.first().map(String::as_str))?;
        let options = self.options();
        let specifiers: Vec<ResourceSpecifier<'_>> =
            topics.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
        // rdkafka enqueues DescribeConfigs when the future is created: it is in flight while
        // DescribeTopics runs.
        let configs =
            (!names.is_empty()).then(|| self.client.describe_configs(specifiers.iter(), &options));
        let described = trace::timed(
            "admin: DescribeTopics",
            || ffi::describe_topics(self.client.inner(), topics, self.timeout),
            |answer| format!("{topics:?}: {}", trace::outcome(answer)),
        )
        .map_err(|e| self.noted(e.into()))?;
        // Only now wait for the configuration: when DescribeTopics failed (an authentication
        // failure is seen there at once), its answer is the one to report.
        let configs = match configs {
            Some(future) => Some(
                trace::timed(
                    "admin: DescribeConfigs (rest of its wait)",
                    || self.runtime.block_on(future),
                    trace::outcome,
                )
                .map_err(|e| self.noted(from_rd(&e)))?,
            ),
            None => None,
        };
        let mut answer = Vec::with_capacity(topics.len());
        for (i, (topic, description)) in topics.iter().zip(described).enumerate() {
            let Some(description) = description else {
                answer.push(None);
                continue;
            };
            let values = match configs.as_ref().and_then(|c| c.get(i)) {
                Some(Ok(resource)) => names
                    .iter()
                    .map(|n| (n.clone(), resource.get(n).and_then(|e| e.value.clone())))
                    .collect(),
                Some(Err(code)) => {
                    return Err(from_code(
                        *code,
                        format!("configuration of topic {topic}: {code}"),
                    ));
                }
                None => Vec::new(),
            };
            let offsets = if with_offsets && !description.partitions.is_empty() {
                self.refresh_if_stale(Some(topic))?;
                trace::timed(
                    "admin: ListOffsets earliest + latest",
                    || {
                        ffi::list_offset_range(
                            self.client.inner(),
                            topic,
                            &description.partitions,
                            self.timeout,
                        )
                    },
                    |answer| format!("{topic}: {}", trace::outcome(answer)),
                )
                .map_err(|e| self.noted(e.into()))?
            } else {
                Vec::new()
            };
            answer.push(Some(TopicInfo {
                topic: topic.clone(),
                topic_id: description.topic_id,
                partitions: description.partitions,
                configs: values,
                offsets,
                replication_factor: description.replication_factor,
            }));
        }
        Ok(answer)
    }

    /// The brokers (DescribeCluster), then, when names are asked for, those configuration
    /// entries of the broker with the lowest ID (DescribeConfigs on its BROKER resource, which
    /// only that broker answers). No metadata refresh first: DescribeCluster reads the brokers
    /// afresh, and a refresh of every topic's metadata would cost a large cluster more.
    pub fn describe_cluster(&self, names: &[String]) -> KafkaResult<ClusterInfo> {
        let brokers = ffi::describe_cluster(self.client.inner(), self.timeout)
            .map_err(|e| self.noted(e.into()))?;
        let configs = match brokers.first() {
            Some(&broker) if !names.is_empty() => self.broker_configs(broker, names)?,
            // No broker listed (the component refuses that answer) or no names.
            _ => names.iter().map(|n| (n.clone(), None)).collect(),
        };
        Ok(ClusterInfo { brokers, configs })
    }

    fn broker_configs(
        &self,
        broker: u32,
        names: &[String],
    ) -> KafkaResult<Vec<(String, Option<String>)>> {
        ffi::describe_broker_configs(self.client.inner(), broker, names, self.timeout)
            .map_err(|e| self.noted(e.into()))
    }

    /// `true` when created, `false` when it already existed; never waits for propagation.
    pub fn create_topic(
        &self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[(String, String)],
    ) -> KafkaResult<bool> {
        let count = i32::try_from(partitions)
            .map_err(|_| invalid(format!("{partitions} partitions is too many")))?;
        let mut new_topic = NewTopic::new(
            topic,
            count,
            TopicReplication::Fixed(i32::from(replication_factor)),
        );
        for (name, value) in configs {
            new_topic = new_topic.set(name, value);
        }
        self.refresh_if_stale(Some(topic))?;
        let future = self.client.create_topics([&new_topic], &self.options());
        let results = self
            .runtime
            .block_on(future)
            .map_err(|e| self.noted(from_rd(&e)))?;
        match results.into_iter().next() {
            Some(Ok(_)) => Ok(true),
            Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Ok(false),
            Some(Err((_, code))) => {
                Err(self.noted(from_code(code, format!("topic {topic}: {code}"))))
            }
            None => Err(invalid(format!("no result for creating topic {topic}"))),
        }
    }

    pub fn list_offsets(
        &self,
        topic: &str,
        partitions: &[u32],
        spec: ffi::Spec,
    ) -> KafkaResult<Vec<(u32, u64)>> {
        self.refresh_if_stale(Some(topic))?;
        trace::timed(
            "admin: ListOffsets",
            || ffi::list_offsets(self.client.inner(), topic, partitions, spec, self.timeout),
            |answer| format!("{topic} {spec:?}: {}", trace::outcome(answer)),
        )
        .map_err(|e| self.noted(self.reason_for_no_entry(topic, e.into())))
    }

    /// librdkafka answers a partition request for a topic the principal may not describe with
    /// `_NOENT` ("no leaders found"), as for a missing topic: the authorization failure is in
    /// the metadata it dropped. One DescribeTopics of that topic recovers the broker's answer,
    /// so that the error maps to the WIT case it is (`authorization`, not `unknown-topic`).
    /// This classifies one failed call; it retries nothing.
    pub(super) fn reason_for_no_entry(
        &self,
        topic: &str,
        error: super::errors::KafkaError,
    ) -> super::errors::KafkaError {
        if error.code != NO_ENTRY {
            return error;
        }
        match ffi::describe_topics(self.client.inner(), &[topic.to_owned()], self.timeout) {
            Err(described) => {
                let described: super::errors::KafkaError = described.into();
                if described.kind == ErrorKind::Authorization {
                    return described;
                }
                error
            }
            Ok(_) => error,
        }
    }
}

//! DeleteRecords: confirming every partition's leader first, sending a call as requests of
//! one leader each, and reporting the partitions that failed as one error.

use std::collections::HashMap;
use std::time::Duration;

use action_state_kafka::policy::delete_request_bound_ms;

use rdkafka::Offset;
use rdkafka::admin::AdminOptions;
use rdkafka::types::RDKafkaErrorCode;

use crate::trace;

use super::admin::Admin;
use super::errors::{KafkaResult, from_code, from_rd, invalid};
use super::ffi;

impl Admin {
    /// The options of each DeleteRecords request of a call on `partitions` partitions: the
    /// broker waits for its replicas (operation timeout) and the client for the answer (request
    /// timeout) that long. The bound counts the whole call's partitions, not the request's:
    /// requests to one leader are answered one after the other (a broker handles one request of
    /// a connection at a time) and each one's time runs from the call, and the brokers of one
    /// cluster share the work of moving every replica's log start (on a test machine, its CPU).
    /// A leader that died costs this long before the component's retry, which the step's own
    /// allowance (the full operation timeout plus the same per partition) still leaves room for.
    fn delete_options(&self, partitions: usize) -> AdminOptions {
        let request_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let bound = Duration::from_millis(delete_request_bound_ms(request_ms, partitions));
        AdminOptions::new()
            .request_timeout(Some(bound))
            .operation_timeout(Some(bound))
    }

    /// Returns each partition's log start offset after the deletion, ascending by partition.
    /// A wide call is sent as DeleteRecords requests of one partition leader each (see
    /// `delete_requests`), all in flight at once, and answered as one: it fails when any
    /// partition failed. Each request is bounded by the request timeout plus the core's
    /// allowance per partition of the call (`delete_request_bound_ms`): it waits until every
    /// replica moved its log start. While the answer is outstanding, `waiting` hears every
    /// second how long it has been (a wide delete waits for every replica: seconds at thousands
    /// of partitions).
    pub fn delete_records(
        &self,
        topic: &str,
        before: &[(u32, u64)],
        waiting: &mut dyn FnMut(Duration),
    ) -> KafkaResult<Vec<(u32, u64)>> {
        let mut offsets = Vec::with_capacity(before.len());
        for &(partition, offset) in before {
            let Ok(o) = i64::try_from(offset) else {
                return Err(invalid(format!(
                    "partition {partition} offset {offset} is out of Kafka's range"
                )));
            };
            offsets.push((partition, o));
        }
        self.refresh_if_stale(Some(topic))?;
        let leaders = self.confirm_leaders(topic, before)?;
        let mut lists = Vec::new();
        for request in delete_requests(&offsets, &leaders, DELETE_PARTITIONS_PER_REQUEST) {
            let entries = request
                .partitions
                .iter()
                .map(|&(p, o)| (p, Offset::Offset(o)));
            let list = ffi::partition_list(topic, entries)?;
            lists.push((list, self.delete_options(before.len())));
        }
        // rdkafka enqueues each request when its future is created: all are in flight at once.
        let futures: Vec<_> = lists
            .iter()
            .map(|(list, options)| self.client.delete_records(list, options))
            .collect();
        let started = std::time::Instant::now();
        let mut beginnings = Vec::with_capacity(before.len());
        let traced_start = started;
        let mut failed = Vec::new();
        for mut future in futures {
            let answer = loop {
                // The timer must be made inside the runtime: an async block defers it.
                let tick = async { tokio::time::timeout(PROGRESS_TICK, &mut future).await };
                match self.runtime.block_on(tick) {
                    Ok(answer) => break answer,
                    Err(_) => waiting(started.elapsed()),
                }
            };
            let result =
                answer.map_err(|e| self.noted(self.reason_for_no_entry(topic, from_rd(&e))))?;
            for element in result.elements() {
                if let Err(error) = element.error() {
                    failed.push((element.partition(), error));
                } else if let (Ok(p), Offset::Offset(o)) =
                    (u32::try_from(element.partition()), element.offset())
                {
                    beginnings.push((p, u64::try_from(o).unwrap_or(0)));
                }
            }
        }
        trace::step("admin: DeleteRecords", traced_start, || {
            format!("{topic}, {} partitions", before.len())
        });
        if let Some(error) = partitions_failed(topic, before.len(), &failed) {
            return Err(self.noted(self.reason_for_no_entry(topic, error)));
        }
        beginnings.sort_unstable();
        Ok(beginnings)
    }
}

impl Admin {
    /// librdkafka's DeleteRecords first looks every partition's leader up in its metadata cache
    /// and, while the cache says the topic is not there yet or has no leader (a topic being
    /// created answers LEADER_NOT_AVAILABLE), asks the cluster again every 3 s until the request
    /// times out, then sends the deletion to whatever topic bears the name by then: one deleted
    /// and recreated meanwhile. So one Metadata request of our own comes first, and the deletion
    /// is sent only when it names a leader for every partition: that answer is what the cache
    /// then holds, so the leader lookup finds every leader at once and never waits. A missing
    /// topic is `unknown-topic` and a missing leader `not-leader`, at once; the component
    /// decides what follows (it confirms the topic ID again before any new attempt).
    /// Returns each partition's leader, for `delete_requests`.
    fn confirm_leaders(&self, topic: &str, before: &[(u32, u64)]) -> KafkaResult<Leaders> {
        let metadata = trace::timed(
            "admin: Metadata (leaders before DeleteRecords)",
            || {
                self.client
                    .inner()
                    .fetch_metadata(Some(topic), self.timeout)
            },
            |answer| format!("{topic}: {}", trace::outcome(answer)),
        )
        .map_err(|e| self.noted(from_rd(&e)))?;
        let missing = || {
            from_code(
                RDKafkaErrorCode::UnknownTopicOrPartition,
                format!("topic {topic} does not exist: no DeleteRecords was sent"),
            )
        };
        let Some(described) = metadata.topics().iter().find(|t| t.name() == topic) else {
            return Err(missing());
        };
        if let Some(error) = described.error() {
            let code = RDKafkaErrorCode::from(error);
            return Err(match code {
                RDKafkaErrorCode::UnknownTopicOrPartition => missing(),
                _ => self.noted(from_code(
                    code,
                    format!("metadata of topic {topic}: {code}: no DeleteRecords was sent"),
                )),
            });
        }
        let leaders: Leaders = described
            .partitions()
            .iter()
            .map(|p| (p.id(), p.leader()))
            .collect();
        for &(partition, _) in before {
            let leader = i32::try_from(partition)
                .ok()
                .and_then(|p| leaders.get(&p).copied());
            match leader {
                None => {
                    return Err(from_code(
                        RDKafkaErrorCode::UnknownTopicOrPartition,
                        format!(
                            "topic {topic} has no partition {partition}: no DeleteRecords was sent"
                        ),
                    ));
                }
                Some(leader) if leader < 0 => {
                    return Err(self.noted(from_code(
                        RDKafkaErrorCode::LeaderNotAvailable,
                        format!(
                            "partition {partition} of {topic} has no leader: no DeleteRecords \
                             was sent"
                        ),
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(leaders)
    }
}

/// Each partition's leader (broker ID) as the Metadata answer names it.
type Leaders = HashMap<i32, i32>;

/// The most partitions one DeleteRecords request carries. Each request waits at its leader
/// until every replica moved its log start, and both ends do work per request that grows with
/// the square of its partitions: librdkafka looks each partition up in the request's own list
/// (sorting by leader, merging the answer), and the broker (Kafka's `DelayedDeleteRecords`)
/// checks every partition of a waiting request again whenever one of them progresses. Fewer
/// requests are not faster either: a broker answers one request of a connection at a time,
/// each after the followers' fetches caught up. Measured on 3 nodes (RF 3, 5,000 partitions,
/// librdkafka 2.16 from Python, load 16-38 on 2 cores; `bench/REPORT-wide.md`), median of three calls:
/// one request per leader, as Kafka's Java AdminClient sends, 14.2 s; 500-partition slices
/// over all leaders (ten requests per leader of about 167 partitions) 13.9 s; per leader in
/// requests of at most 1,000 12.3 s, of at most 250 10.2 s, of at most 500 9.9 s.
pub const DELETE_PARTITIONS_PER_REQUEST: usize = 500;

/// One DeleteRecords request: (partition, offset) pairs with one leader.
#[derive(Debug, PartialEq, Eq)]
struct DeleteRequest {
    partitions: Vec<(u32, i64)>,
}

/// The call's partitions grouped by leader, each leader's in as few requests of at most `cap`
/// partitions as there can be, of equal size (1,000 partitions of one leader at a cap of 500
/// are two requests of 500; 1,667 are three of 417 and one of 416). The leaders are those of the Metadata
/// answer just read; librdkafka routes every partition by the same cached answer, so a leader
/// that moved meanwhile costs a second request, never a wrong one. Partitions keep their order.
fn delete_requests(offsets: &[(u32, i64)], leaders: &Leaders, cap: usize) -> Vec<DeleteRequest> {
    let mut by_leader: Vec<(i32, Vec<(u32, i64)>)> = Vec::new();
    let mut index: HashMap<i32, usize> = HashMap::new();
    for &(partition, offset) in offsets {
        let leader = i32::try_from(partition)
            .ok()
            .and_then(|p| leaders.get(&p).copied())
            .unwrap_or(-1);
        let slot = *index.entry(leader).or_insert_with(|| {
            by_leader.push((leader, Vec::new()));
            by_leader.len() - 1
        });
        by_leader[slot].1.push((partition, offset));
    }
    let cap = cap.max(1);
    let mut requests = Vec::new();
    for (_, partitions) in by_leader {
        let count = partitions.len();
        let size = count.div_ceil(count.div_ceil(cap));
        for chunk in partitions.chunks(size) {
            requests.push(DeleteRequest {
                partitions: chunk.to_vec(),
            });
        }
    }
    requests
}

/// How often a long request reports that it is still waiting.
const PROGRESS_TICK: Duration = Duration::from_secs(1);

/// How many partitions a failed call names one by one.
const NAMED_PARTITIONS: usize = 5;

/// The failure of a DeleteRecords call some of whose partitions failed: the first partition's
/// error code decides the case; the message says how many of the call's partitions failed and
/// names the first few (a deletion cut short by a timeout is still pending on all of them).
fn partitions_failed(
    topic: &str,
    requested: usize,
    failed: &[(i32, rdkafka::error::KafkaError)],
) -> Option<super::errors::KafkaError> {
    let (first_partition, first_error) = failed.first()?;
    let code = first_error
        .rdkafka_error_code()
        .unwrap_or(RDKafkaErrorCode::Unknown);
    let mut named: Vec<String> = failed
        .iter()
        .take(NAMED_PARTITIONS)
        .map(|(partition, _)| format!("{topic}-{partition}"))
        .collect();
    if failed.len() > NAMED_PARTITIONS {
        named.push(format!("{} more", failed.len() - NAMED_PARTITIONS));
    }
    Some(from_code(
        code,
        format!(
            "DeleteRecords did not complete on {} of {requested} partitions ({}); {topic}-{first_partition}: {code}",
            failed.len(),
            named.join(", "),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use rdkafka::error::KafkaError as RdError;
    use rdkafka::types::RDKafkaErrorCode;

    use super::{
        DELETE_PARTITIONS_PER_REQUEST, DeleteRequest, Leaders, delete_requests, partitions_failed,
    };
    use crate::kafka::ErrorKind;

    /// Partitions 0..n led by brokers 1, 2, 3 in turn, as Kafka places a new topic's leaders.
    fn round_robin(n: u32) -> (Vec<(u32, i64)>, Leaders) {
        let offsets = (0..n).map(|p| (p, i64::from(p % 7))).collect();
        let leaders = (0..n)
            .map(|p| (i32::try_from(p).unwrap(), i32::try_from(p % 3).unwrap() + 1))
            .collect();
        (offsets, leaders)
    }

    fn shape(requests: &[DeleteRequest]) -> Vec<usize> {
        requests.iter().map(|r| r.partitions.len()).collect()
    }

    #[test]
    fn a_wide_delete_is_sent_in_equal_requests_of_one_leader_each() {
        let (offsets, leaders) = round_robin(5_000);
        let requests = delete_requests(&offsets, &leaders, DELETE_PARTITIONS_PER_REQUEST);
        // Leaders 1 and 2 lead 1,667 partitions each, leader 3 1,666: four requests each.
        assert_eq!(
            shape(&requests),
            [417, 417, 417, 416, 417, 417, 417, 416, 417, 417, 417, 415]
        );
        for (request, leader) in requests.iter().zip([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]) {
            assert!(
                request
                    .partitions
                    .iter()
                    .all(|&(p, o)| leaders[&i32::try_from(p).unwrap()] == leader
                        && o == i64::from(p % 7)),
                "one leader per request, offsets kept"
            );
        }
        // Every partition exactly once.
        let mut sent: Vec<(u32, i64)> = requests.into_iter().flat_map(|r| r.partitions).collect();
        sent.sort_unstable();
        assert_eq!(sent, offsets);
    }

    #[test]
    fn a_narrow_delete_is_one_request_per_leader() {
        let (offsets, leaders) = round_robin(10);
        let requests = delete_requests(&offsets, &leaders, DELETE_PARTITIONS_PER_REQUEST);
        assert_eq!(shape(&requests), [4, 3, 3]);
        assert_eq!(requests[0].partitions, [(0, 0), (3, 3), (6, 6), (9, 2)]);
        // One leader for everything: 1,000 partitions are two full requests, 1,001 three.
        let single: Leaders = (0..1_001).map(|p| (p, 7)).collect();
        let offsets: Vec<(u32, i64)> = (0..1_001).map(|p| (p, 1)).collect();
        let requests = delete_requests(&offsets[..1_000], &single, 500);
        assert_eq!(shape(&requests), [500, 500]);
        let requests = delete_requests(&offsets, &single, 500);
        assert_eq!(shape(&requests), [334, 334, 333]);
        assert!(delete_requests(&[], &single, 500).is_empty());
    }

    #[test]
    fn a_delete_cut_short_is_reported_as_one_delete_naming_the_partitions_left() {
        let timed_out = |p| (p, RdError::OffsetFetch(RDKafkaErrorCode::OperationTimedOut));
        let failed: Vec<_> = (0..7).map(timed_out).collect();
        let error = partitions_failed("orders", 10_000, &failed).unwrap();
        assert_eq!(error.kind, ErrorKind::Timeout);
        assert_eq!(
            error.message,
            "DeleteRecords did not complete on 7 of 10000 partitions (orders-0, orders-1, orders-2, orders-3, orders-4, 2 more); orders-0: OperationTimedOut (Local: Timed out)"
        );
        assert!(!error.to_string().contains("Offset fetch"), "{error}");
        assert!(partitions_failed("orders", 3, &[]).is_none());
    }
}

//! The admin calls rdkafka's safe API lacks, over librdkafka's C API: DescribeTopics (for the
//! topic ID and replica counts), DescribeCluster (the brokers), DescribeConfigs of a broker (with
//! the resource's own error, which rdkafka's `describe_configs` drops) and ListOffsets (earliest
//! or latest for many partitions in one request per leader).
//!
//! Every function here owns what it creates (queue, options, collections, events) through small
//! guards, so an early return never leaks, and reads results only before destroying the event
//! that owns them.

use std::ffi::{CStr, CString, c_char};
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::client::{Client, ClientContext};
use rdkafka::{Offset, TopicPartitionList};

/// One topic as DescribeTopics reports it; `None` from `describe_topics` means unknown topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedTopic {
    pub topic_id: String,
    pub partitions: Vec<u32>,
    /// The smallest number of assigned replicas over the partitions (0 without partitions).
    pub replication_factor: u16,
}

/// An error from librdkafka: its error name (e.g. `UNKNOWN_TOPIC_OR_PART`) and description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeError {
    pub code: rd::rd_kafka_resp_err_t,
    pub message: String,
}

impl std::fmt::Display for NativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl NativeError {
    fn new(code: rd::rd_kafka_resp_err_t, detail: Option<String>) -> Self {
        // SAFETY: rd_kafka_err2name returns a static string for every code.
        let name = unsafe { CStr::from_ptr(rd::rd_kafka_err2name(code)) }.to_string_lossy();
        let message = match detail {
            Some(detail) if !detail.is_empty() => format!("{name}: {detail}"),
            _ => name.into_owned(),
        };
        NativeError { code, message }
    }

    pub fn is_retriable(&self) -> bool {
        use rd::rd_kafka_resp_err_t::*;
        matches!(
            self.code,
            RD_KAFKA_RESP_ERR__TIMED_OUT
                | RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT
                | RD_KAFKA_RESP_ERR__TRANSPORT
                | RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION
                | RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE
                | RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN
        )
    }
}

fn c_text(text: *const c_char) -> Option<String> {
    // SAFETY: librdkafka returns NUL-terminated strings or null.
    (!text.is_null()).then(|| {
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    })
}

struct Queue(*mut rd::rd_kafka_queue_t);
impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: created by rd_kafka_queue_new and destroyed once.
        unsafe { rd::rd_kafka_queue_destroy(self.0) }
    }
}

struct Options(*mut rd::rd_kafka_AdminOptions_t);
impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: created by rd_kafka_AdminOptions_new and destroyed once.
        unsafe { rd::rd_kafka_AdminOptions_destroy(self.0) }
    }
}

struct Event(*mut rd::rd_kafka_event_t);
impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: returned by rd_kafka_queue_poll and destroyed once.
        unsafe { rd::rd_kafka_event_destroy(self.0) }
    }
}

struct Collection(*mut rd::rd_kafka_TopicCollection_t);
impl Drop for Collection {
    fn drop(&mut self) {
        // SAFETY: created by rd_kafka_TopicCollection_of_topic_names and destroyed once.
        unsafe { rd::rd_kafka_TopicCollection_destroy(self.0) }
    }
}

struct ConfigResource(*mut rd::rd_kafka_ConfigResource_t);
impl Drop for ConfigResource {
    fn drop(&mut self) {
        // SAFETY: created by rd_kafka_ConfigResource_new and destroyed once.
        unsafe { rd::rd_kafka_ConfigResource_destroy(self.0) }
    }
}

/// An admin request in flight: its result arrives on its own queue.
struct Pending {
    client: *mut rd::rd_kafka_t,
    queue: Queue,
    _options: Options,
    timeout_ms: i32,
}

/// How often a wait looks for an authentication failure while its answer is outstanding.
const AUTHENTICATION_CHECK: Duration = Duration::from_millis(100);

/// Starts one admin request: `start` enqueues it on a fresh queue with options carrying the
/// request timeout. Several pending requests run concurrently.
fn start_admin(
    client: *mut rd::rd_kafka_t,
    op: rd::rd_kafka_admin_op_t,
    timeout: Duration,
    configure: impl FnOnce(*mut rd::rd_kafka_AdminOptions_t),
    start: impl FnOnce(*mut rd::rd_kafka_AdminOptions_t, *mut rd::rd_kafka_queue_t),
) -> Result<Pending, NativeError> {
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `client` is a live rd_kafka_t owned by the caller's AdminClient.
    let queue = Queue(unsafe { rd::rd_kafka_queue_new(client) });
    // SAFETY: as above; the options are destroyed by the guard after the request completes.
    let options = Options(unsafe { rd::rd_kafka_AdminOptions_new(client, op) });
    let mut errstr = [0 as c_char; 256];
    // SAFETY: errstr is a writable buffer of the stated size.
    let code = unsafe {
        rd::rd_kafka_AdminOptions_set_request_timeout(
            options.0,
            timeout_ms,
            errstr.as_mut_ptr(),
            errstr.len(),
        )
    };
    if code != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
        return Err(NativeError::new(code, c_text(errstr.as_ptr())));
    }
    configure(options.0);
    start(options.0, queue.0);
    Ok(Pending {
        client,
        queue,
        _options: options,
        timeout_ms,
    })
}

impl Pending {
    /// Waits for the result event (the broker's timeout plus a margin). librdkafka keeps a
    /// request queued while no broker accepts the client's credentials and reports the
    /// refusal only as an error event on the client's main queue: the wait looks there too, so
    /// a wrong password is answered as `authentication` at once instead of as a timeout. The
    /// same events say why no broker is reachable (a name that does not resolve, a refused
    /// connection, naming the address): a request that fails or times out for want of a
    /// broker reports that cause, and one still waiting when every broker is down ends at once.
    fn wait(self) -> Result<Event, NativeError> {
        let limit = Duration::from_millis(u64::try_from(self.timeout_ms).unwrap_or(0))
            + Duration::from_secs(5);
        let deadline = std::time::Instant::now() + limit;
        let event = loop {
            let slice = deadline
                .saturating_duration_since(std::time::Instant::now())
                .min(AUTHENTICATION_CHECK);
            let slice_ms = i32::try_from(slice.as_millis()).unwrap_or(i32::MAX);
            // SAFETY: the queue is live; a null event means nothing arrived in this slice.
            let event = unsafe { rd::rd_kafka_queue_poll(self.queue.0, slice_ms) };
            if !event.is_null() {
                break Event(event);
            }
            let seen = client_events(self.client);
            if let Some(refusal) = seen.refusal {
                return Err(refusal);
            }
            if seen.all_brokers_down
                && let Some(unreachable) = unreachable_cause(self.client)
            {
                return Err(unreachable);
            }
            if slice.is_zero() {
                return Err(unreachable_cause(self.client).unwrap_or_else(|| {
                    NativeError::new(rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__TIMED_OUT, None)
                }));
            }
        };
        // SAFETY: the event is live until the guard drops.
        let code = unsafe { rd::rd_kafka_event_error(event.0) };
        if code != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            let error = NativeError::new(
                code,
                c_text(unsafe { rd::rd_kafka_event_error_string(event.0) }),
            );
            let for_want_of_a_broker = matches!(
                code,
                rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__TRANSPORT
                    | rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__TIMED_OUT
                    | rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN
            );
            client_events(self.client);
            return Err(for_want_of_a_broker
                .then(|| unreachable_cause(self.client))
                .flatten()
                .unwrap_or(error));
        }
        forget_unreachable(self.client);
        Ok(event)
    }
}

/// What the error events waiting on a client's main queue said (other events there are only
/// informational for an admin client and are dropped).
#[derive(Default)]
struct ClientEvents {
    /// A refused login, or a TLS handshake that failed (`_SSL`: an untrusted or unverifiable
    /// broker certificate, no common protocol; librdkafka reports disconnects as `_TRANSPORT`
    /// instead), which Kafka's Java client also reports as an authentication error and which,
    /// like a wrong password, no retry cures.
    refusal: Option<NativeError>,
    /// librdkafka said that no broker is up (`_ALL_BROKERS_DOWN`).
    all_brokers_down: bool,
}

/// The latest reason each client could not reach a broker (`_RESOLVE`: the name does not
/// resolve; `_TRANSPORT`: e.g. "Connect to ipv4#127.0.0.1:1 failed: Connection refused"), by
/// client, until a request of that client succeeds. librdkafka reports a repeated identical
/// failure only once, so the reason must outlive the request that saw it.
static UNREACHABLE: std::sync::Mutex<Vec<(usize, NativeError)>> = std::sync::Mutex::new(Vec::new());

/// Why `client` last failed to reach a broker, when no request of it succeeded since.
pub(crate) fn unreachable_cause(client: *mut rd::rd_kafka_t) -> Option<NativeError> {
    let known = UNREACHABLE.lock().unwrap_or_else(|p| p.into_inner());
    known
        .iter()
        .find(|(c, _)| *c == client as usize)
        .map(|(_, error)| error.clone())
}

fn forget_unreachable(client: *mut rd::rd_kafka_t) {
    let mut known = UNREACHABLE.lock().unwrap_or_else(|p| p.into_inner());
    known.retain(|(c, _)| *c != client as usize);
}

fn client_events(client: *mut rd::rd_kafka_t) -> ClientEvents {
    // SAFETY: `client` is live; the main queue reference is released by the guard.
    let main = Queue(unsafe { rd::rd_kafka_queue_get_main(client) });
    let mut seen = ClientEvents::default();
    loop {
        // SAFETY: the queue is live; a zero timeout returns what is already there.
        let event = unsafe { rd::rd_kafka_queue_poll(main.0, 0) };
        if event.is_null() {
            return seen;
        }
        let event = Event(event);
        // SAFETY: the event is live until its guard drops.
        let (kind, code) = unsafe {
            (
                rd::rd_kafka_event_type(event.0),
                rd::rd_kafka_event_error(event.0),
            )
        };
        if kind == rd::RD_KAFKA_EVENT_LOG {
            // The admin client's log lines come this way: shown only when asked for.
            super::client_log::log_event(event.0);
            continue;
        }
        if kind != rd::RD_KAFKA_EVENT_ERROR {
            continue;
        }
        // SAFETY: as above.
        let error = || {
            NativeError::new(
                code,
                c_text(unsafe { rd::rd_kafka_event_error_string(event.0) }),
            )
        };
        use rd::rd_kafka_resp_err_t::*;
        match code {
            RD_KAFKA_RESP_ERR__AUTHENTICATION | RD_KAFKA_RESP_ERR__SSL
                if seen.refusal.is_none() =>
            {
                seen.refusal = Some(error());
            }
            RD_KAFKA_RESP_ERR__RESOLVE | RD_KAFKA_RESP_ERR__TRANSPORT => {
                let mut known = UNREACHABLE.lock().unwrap_or_else(|p| p.into_inner());
                known.retain(|(c, _)| *c != client as usize);
                known.push((client as usize, error()));
            }
            RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN => seen.all_brokers_down = true,
            _ => {}
        }
    }
}

fn run_admin(
    client: *mut rd::rd_kafka_t,
    op: rd::rd_kafka_admin_op_t,
    timeout: Duration,
    configure: impl FnOnce(*mut rd::rd_kafka_AdminOptions_t),
    start: impl FnOnce(*mut rd::rd_kafka_AdminOptions_t, *mut rd::rd_kafka_queue_t),
) -> Result<Event, NativeError> {
    start_admin(client, op, timeout, configure, start)?.wait()
}

/// Describes topics in one request; unknown topics come back as `None`.
pub fn describe_topics(
    client: &Client<impl ClientContext>,
    topics: &[String],
    timeout: Duration,
) -> Result<Vec<Option<DescribedTopic>>, NativeError> {
    let client = client.native_ptr();
    let names: Vec<CString> = topics
        .iter()
        .map(|t| CString::new(t.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            NativeError::new(
                rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__INVALID_ARG,
                Some("topic name contains NUL".into()),
            )
        })?;
    let mut pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    // SAFETY: `pointers` holds `names.len()` valid C strings that outlive the call; librdkafka
    // copies them into the collection.
    let collection = Collection(unsafe {
        rd::rd_kafka_TopicCollection_of_topic_names(pointers.as_mut_ptr(), pointers.len())
    });
    let event = run_admin(
        client,
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBETOPICS,
        timeout,
        |_| {},
        // SAFETY: client, collection, options and queue are all live for the call.
        |options, queue| unsafe {
            rd::rd_kafka_DescribeTopics(client, collection.0, options, queue)
        },
    )?;
    // SAFETY: the event is a DescribeTopics result (we polled our own queue for our request).
    let result = unsafe { rd::rd_kafka_event_DescribeTopics_result(event.0) };
    if result.is_null() {
        return Err(NativeError::new(
            rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__BAD_MSG,
            Some("no DescribeTopics result".into()),
        ));
    }
    let mut count = 0usize;
    // SAFETY: returns an array of `count` descriptions owned by the event.
    let descriptions = unsafe { rd::rd_kafka_DescribeTopics_result_topics(result, &mut count) };
    let mut found: Vec<(String, Option<DescribedTopic>)> = Vec::with_capacity(count);
    for index in 0..count {
        // SAFETY: index < count; each description is valid while the event lives.
        let description = unsafe { *descriptions.add(index) };
        let name =
            c_text(unsafe { rd::rd_kafka_TopicDescription_name(description) }).unwrap_or_default();
        let error = unsafe { rd::rd_kafka_TopicDescription_error(description) };
        if !error.is_null() {
            let code = unsafe { rd::rd_kafka_error_code(error) };
            if code == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART {
                found.push((name, None));
                continue;
            }
            return Err(NativeError::new(
                code,
                c_text(unsafe { rd::rd_kafka_error_string(error) }),
            ));
        }
        let uuid = unsafe { rd::rd_kafka_TopicDescription_topic_id(description) };
        let (most, least) = unsafe {
            (
                rd::rd_kafka_Uuid_most_significant_bits(uuid),
                rd::rd_kafka_Uuid_least_significant_bits(uuid),
            )
        };
        let mut partition_count = 0usize;
        let infos =
            unsafe { rd::rd_kafka_TopicDescription_partitions(description, &mut partition_count) };
        let mut partitions: Vec<u32> = (0..partition_count)
            .map(|i| unsafe { rd::rd_kafka_TopicPartitionInfo_partition(*infos.add(i)) })
            .filter_map(|p| u32::try_from(p).ok())
            .collect();
        partitions.sort_unstable();
        let replication_factor = (0..partition_count)
            .map(|i| {
                let mut replicas = 0usize;
                // SAFETY: i < partition_count; only the count is read, the nodes stay the event's.
                unsafe { rd::rd_kafka_TopicPartitionInfo_replicas(*infos.add(i), &mut replicas) };
                u16::try_from(replicas).unwrap_or(u16::MAX)
            })
            .min()
            .unwrap_or(0);
        found.push((
            name,
            Some(DescribedTopic {
                topic_id: kafka_uuid(most, least),
                partitions,
                replication_factor,
            }),
        ));
    }
    Ok(topics
        .iter()
        .map(|topic| {
            found
                .iter()
                .find(|(name, _)| name == topic)
                .and_then(|(_, d)| d.clone())
        })
        .collect())
}

/// The IDs of the brokers DescribeCluster lists, ascending and without duplicates.
pub fn describe_cluster(
    client: &Client<impl ClientContext>,
    timeout: Duration,
) -> Result<Vec<u32>, NativeError> {
    let client = client.native_ptr();
    let event = run_admin(
        client,
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECLUSTER,
        timeout,
        |_| {},
        // SAFETY: client, options and queue are live for the call.
        |options, queue| unsafe { rd::rd_kafka_DescribeCluster(client, options, queue) },
    )?;
    // SAFETY: the event is a DescribeCluster result (we polled our own queue for our request).
    let result = unsafe { rd::rd_kafka_event_DescribeCluster_result(event.0) };
    if result.is_null() {
        return Err(NativeError::new(
            rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__BAD_MSG,
            Some("no DescribeCluster result".into()),
        ));
    }
    let mut count = 0usize;
    // SAFETY: returns an array of `count` nodes owned by the event.
    let nodes = unsafe { rd::rd_kafka_DescribeCluster_result_nodes(result, &mut count) };
    let mut brokers: Vec<u32> = (0..count)
        // SAFETY: index < count; each node is valid while the event lives.
        .map(|i| unsafe { rd::rd_kafka_Node_id(*nodes.add(i)) })
        .filter_map(|id| u32::try_from(id).ok())
        .collect();
    brokers.sort_unstable();
    brokers.dedup();
    Ok(brokers)
}

/// The named configuration entries of one broker (DescribeConfigs on its BROKER resource), in
/// the order asked, `None` for a name the broker reports no value for. The resource's own error
/// is the call's error: without DescribeConfigs on the cluster the broker answers the resource
/// with CLUSTER_AUTHORIZATION_FAILED and no entries, which must not read as "no value".
pub fn describe_broker_configs(
    client: &Client<impl ClientContext>,
    broker: u32,
    names: &[String],
    timeout: Duration,
) -> Result<Vec<(String, Option<String>)>, NativeError> {
    let client = client.native_ptr();
    let id =
        CString::new(broker.to_string()).map_err(|_| invalid_arg(format!("broker ID {broker}")))?;
    // SAFETY: the name is a valid C string; librdkafka copies it.
    let resource = ConfigResource(unsafe {
        rd::rd_kafka_ConfigResource_new(
            rd::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_BROKER,
            id.as_ptr(),
        )
    });
    let mut resources = [resource.0];
    let event = run_admin(
        client,
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS,
        timeout,
        |_| {},
        // SAFETY: client, the resource array, options and queue are live for the call;
        // librdkafka copies the resources.
        |options, queue| unsafe {
            rd::rd_kafka_DescribeConfigs(client, resources.as_mut_ptr(), 1, options, queue)
        },
    )?;
    // SAFETY: the event is a DescribeConfigs result (we polled our own queue for our request).
    let result = unsafe { rd::rd_kafka_event_DescribeConfigs_result(event.0) };
    if result.is_null() {
        return Err(NativeError::new(
            rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__BAD_MSG,
            Some("no DescribeConfigs result".into()),
        ));
    }
    let mut count = 0usize;
    // SAFETY: returns `count` resources owned by the event.
    let answered = unsafe { rd::rd_kafka_DescribeConfigs_result_resources(result, &mut count) };
    if count == 0 {
        return Err(NativeError::new(
            rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__BAD_MSG,
            Some(format!("no configuration of broker {broker} in the answer")),
        ));
    }
    // SAFETY: count >= 1; the resource is valid while the event lives.
    let answered = unsafe { *answered };
    // SAFETY: as above.
    let code = unsafe { rd::rd_kafka_ConfigResource_error(answered) };
    if code != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
        // SAFETY: as above; the string is owned by the event.
        let detail = c_text(unsafe { rd::rd_kafka_ConfigResource_error_string(answered) });
        return Err(NativeError::new(
            code,
            Some(format!(
                "configuration of broker {broker}{}",
                detail.map_or(String::new(), |d| format!(": {d}"))
            )),
        ));
    }
    let mut entry_count = 0usize;
    // SAFETY: returns `entry_count` entries owned by the event.
    let entries = unsafe { rd::rd_kafka_ConfigResource_configs(answered, &mut entry_count) };
    let found: Vec<(String, Option<String>)> = (0..entry_count)
        .map(|i| {
            // SAFETY: i < entry_count; names and values are owned by the event.
            let entry = unsafe { *entries.add(i) };
            (
                c_text(unsafe { rd::rd_kafka_ConfigEntry_name(entry) }).unwrap_or_default(),
                c_text(unsafe { rd::rd_kafka_ConfigEntry_value(entry) }),
            )
        })
        .collect();
    Ok(names
        .iter()
        .map(|name| {
            let value = found
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone());
            (name.clone(), value)
        })
        .collect())
}

/// Which end of the partitions to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spec {
    Earliest,
    Latest,
}

/// The most partitions one ListOffsets admin request carries (DeleteRecords: see
/// `admin::DELETE_PARTITIONS_PER_REQUEST`). librdkafka
/// handles one admin request in steps that look each partition up in a list of the request's
/// partitions: sorting them out by leader (`rd_kafka_topic_partition_list_get_leaders`) and
/// merging each broker's answer (`rd_kafka_ListOffsets_response_merge`,
/// `rd_kafka_DeleteRecords_response_merge`). That is time quadratic in the partitions of one
/// request: one apply of a 10,000-partition plan spent 5 s of CPU in it. A wider call is sent as
/// several requests of the same kind, all in flight at once, and answered as one, which makes
/// the cost linear (n × 500 comparisons). librdkafka sends one request per partition leader
/// either way; this multiplies those by the number of slices.
pub const PARTITIONS_PER_REQUEST: usize = 500;

/// A request list of (partition, offset) for one topic, built without librdkafka's per-element
/// lookup (`rd_kafka_topic_partition_list_set_offset` searches the whole list: quadratic).
pub fn partition_list(
    topic: &str,
    entries: impl ExactSizeIterator<Item = (u32, Offset)>,
) -> Result<TopicPartitionList, NativeError> {
    let mut list = TopicPartitionList::with_capacity(entries.len());
    for (partition, offset) in entries {
        let number = i32::try_from(partition)
            .map_err(|_| invalid_arg(format!("partition {partition} out of range")))?;
        list.add_partition(topic, number)
            .set_offset(offset)
            .map_err(|e| invalid_arg(e.to_string()))?;
    }
    Ok(list)
}

/// Lists the earliest or latest offset of each partition (one request per partition leader
/// and per `PARTITIONS_PER_REQUEST` partitions, all in flight at once), with read_committed
/// isolation so "latest" is the last stable offset under transactions. Ascending by partition.
pub fn list_offsets(
    client: &Client<impl ClientContext>,
    topic: &str,
    partitions: &[u32],
    spec: Spec,
    timeout: Duration,
) -> Result<Vec<(u32, u64)>, NativeError> {
    let native = client.native_ptr();
    let pending = partitions
        .chunks(PARTITIONS_PER_REQUEST)
        .map(|chunk| start_list_offsets(native, topic, chunk, spec, timeout))
        .collect::<Result<Vec<_>, _>>()?;
    finish_all(pending)
}

/// Waits for every request of one call and joins their answers, ascending by partition.
fn finish_all(pending: Vec<Pending>) -> Result<Vec<(u32, u64)>, NativeError> {
    let mut offsets = Vec::new();
    for request in pending {
        offsets.extend(finish_list_offsets(request.wait()?)?);
    }
    offsets.sort_unstable();
    Ok(offsets)
}

/// Beginning and end of each partition: both ListOffsets requests are in flight at once.
pub fn list_offset_range(
    client: &Client<impl ClientContext>,
    topic: &str,
    partitions: &[u32],
    timeout: Duration,
) -> Result<Vec<(u32, u64, u64)>, NativeError> {
    let native = client.native_ptr();
    let start = |spec| {
        partitions
            .chunks(PARTITIONS_PER_REQUEST)
            .map(|chunk| start_list_offsets(native, topic, chunk, spec, timeout))
            .collect::<Result<Vec<_>, _>>()
    };
    let earliest = start(Spec::Earliest)?;
    let latest = start(Spec::Latest)?;
    let beginnings = finish_all(earliest)?;
    let ends: std::collections::HashMap<u32, u64> = finish_all(latest)?.into_iter().collect();
    Ok(beginnings
        .into_iter()
        .filter_map(|(p, b)| ends.get(&p).map(|e| (p, b, *e)))
        .collect())
}

fn invalid_arg(detail: String) -> NativeError {
    NativeError::new(
        rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__INVALID_ARG,
        Some(detail),
    )
}

fn start_list_offsets(
    client: *mut rd::rd_kafka_t,
    topic: &str,
    partitions: &[u32],
    spec: Spec,
    timeout: Duration,
) -> Result<Pending, NativeError> {
    let offset = match spec {
        Spec::Earliest => Offset::Beginning,
        Spec::Latest => Offset::End,
    };
    let request = partition_list(topic, partitions.iter().map(|&p| (p, offset)))?;
    start_admin(
        client,
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTOFFSETS,
        timeout,
        |options| {
            // SAFETY: options are live; setting the isolation level cannot fail for this op.
            let error = unsafe {
                rd::rd_kafka_AdminOptions_set_isolation_level(
                    options,
                    rd::rd_kafka_IsolationLevel_t::RD_KAFKA_ISOLATION_LEVEL_READ_COMMITTED,
                )
            };
            if !error.is_null() {
                // SAFETY: an error object returned to us is ours to destroy.
                unsafe { rd::rd_kafka_error_destroy(error) };
            }
        },
        // SAFETY: the list outlives the call; librdkafka copies it.
        |options, queue| unsafe { rd::rd_kafka_ListOffsets(client, request.ptr(), options, queue) },
    )
}

fn finish_list_offsets(event: Event) -> Result<Vec<(u32, u64)>, NativeError> {
    // SAFETY: the event is our ListOffsets result.
    let result = unsafe { rd::rd_kafka_event_ListOffsets_result(event.0) };
    if result.is_null() {
        return Err(NativeError::new(
            rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__BAD_MSG,
            Some("no ListOffsets result".into()),
        ));
    }
    let mut count = 0usize;
    // SAFETY: returns `count` infos owned by the event.
    let infos = unsafe { rd::rd_kafka_ListOffsets_result_infos(result, &mut count) };
    let mut offsets = Vec::with_capacity(count);
    for index in 0..count {
        // SAFETY: index < count; the partition struct is owned by the event.
        let partition =
            unsafe { &*rd::rd_kafka_ListOffsetsResultInfo_topic_partition(*infos.add(index)) };
        if partition.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return Err(NativeError::new(
                partition.err,
                Some(format!("partition {}", partition.partition)),
            ));
        }
        let (Ok(p), Ok(o)) = (
            u32::try_from(partition.partition),
            u64::try_from(partition.offset),
        ) else {
            // An invalid offset without an error comes from a leader that just died (librdkafka
            // still asks the cached one): retriable, like a leader change.
            return Err(NativeError::new(
                rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                Some(format!(
                    "partition {} has no leader that answered with an offset (the answer held \
                     {}); its leader may have just moved",
                    partition.partition, partition.offset
                )),
            ));
        };
        offsets.push((p, o));
    }
    Ok(offsets)
}

/// Kafka's `Uuid.toString()`: the 16 bytes (most significant half first, big-endian) in URL-safe
/// base64 without padding — 22 characters.
pub fn kafka_uuid(most: i64, least: i64) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&most.to_be_bytes());
    bytes[8..].copy_from_slice(&least.to_be_bytes());
    let mut out = String::with_capacity(22);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let digits = chunk.len() + 1;
        for i in 0..digits {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::kafka_uuid;

    #[test]
    fn uuid_matches_kafkas_url_safe_base64() {
        assert_eq!(kafka_uuid(0, 0), "AAAAAAAAAAAAAAAAAAAAAA");
        // Kafka's Uuid(-1L, -1L).toString() is "_____________________w" (URL-safe, no padding).
        assert_eq!(kafka_uuid(-1, -1), "_____________________w");
        // 0xfb (-5) as the first byte exercises the URL-safe '-'/'_' digits.
        assert!(kafka_uuid(-5 << 56, 0).starts_with('-'));
    }
}

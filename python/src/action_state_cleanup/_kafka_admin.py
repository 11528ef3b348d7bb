"""`kafka-admin` over confluent-kafka's AdminClient: each function sends its requests once and
maps a failure to its `kafka-error` case; no retries, no waiting for propagation."""

from __future__ import annotations

import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from confluent_kafka import IsolationLevel, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, OffsetSpec, ResourceType

from ._kafka_errors import CASES, CapabilityError, failure, kafka_error

#: How often a wait looks for a refused login while its answer is outstanding.
LOGIN_CHECK = 0.1

#: The most partitions one ListOffsets or DeleteRecords admin request carries. librdkafka sorts
#: a request's partitions by leader and merges each broker's answer by looking every partition
#: up in a list of all of them: time quadratic in the partitions of one request (seconds of CPU
#: at 10,000). A wider call is sent as several requests, all in flight at once, and answered as
#: one (the Rust host does the same, `ffi::PARTITIONS_PER_REQUEST`).
PARTITIONS_PER_REQUEST = 500


def _slices(items: Sequence[Any]) -> List[Sequence[Any]]:
    return [items[i : i + PARTITIONS_PER_REQUEST] for i in range(0, len(items), PARTITIONS_PER_REQUEST)]


class Admin(AdminClient):
    """An AdminClient that hears of a refused login. librdkafka keeps an admin request queued
    while no broker accepts the client's credentials and reports the refusal only as an error
    event (to `error_cb`, served by `poll`), so the request itself would end as a timeout; the
    waits below ask `refusal` instead, and the WIT wants `authentication` as soon as the client
    knows. An `error_cb` among the operator's properties is still called."""

    def __init__(self, config: Dict[str, Any]) -> None:
        self._refusal: Optional[KafkaError] = None
        self._operator_error_cb: Optional[Callable[[KafkaError], None]] = config.get("error_cb")
        super().__init__({**config, "error_cb": self._error})

    def _error(self, error: KafkaError) -> None:
        if self._refusal is None and error.code() in CASES["authentication"]:
            self._refusal = error
        if self._operator_error_cb is not None:
            self._operator_error_cb(error)

    def refusal(self) -> Optional[KafkaError]:
        """The first refused login the client reported since the last call, if any."""
        self.poll(0)
        refusal, self._refusal = self._refusal, None
        return refusal


def _wait(admin: Admin, future, timeout: float):
    """The answer of `future` within the request timeout plus a margin; a refused login reported
    meanwhile is raised at once (as the client's `_AUTHENTICATION` error) instead."""
    deadline = time.monotonic() + timeout + 5
    while True:
        left = max(0.0, deadline - time.monotonic())
        try:
            return future.result(timeout=min(LOGIN_CHECK, left))
        except FutureTimeout:
            refusal = admin.refusal()
            if refusal is not None:
                raise KafkaException(refusal) from None
            if left <= LOGIN_CHECK:
                raise


class TopicMetadata(NamedTuple):
    topic: str
    topic_id: str
    partitions: List[int]
    #: (name, value or None) per requested name, in order.
    configs: List[Tuple[str, Optional[str]]]
    #: (partition, beginning, end) per partition when offsets were asked for.
    offsets: List[Tuple[int, int, int]]
    #: The smallest number of assigned replicas over the partitions (0 without partitions).
    replication_factor: int = 0


class ClusterDescription(NamedTuple):
    #: Broker IDs, ascending, without duplicates.
    brokers: List[int]
    #: (name, value or None) per requested name, in order, of the broker with the lowest ID.
    configs: List[Tuple[str, Optional[str]]]


def _result(operation: str, admin: Admin, future, timeout: float):
    try:
        return _wait(admin, future, timeout)
    except Exception as e:
        raise failure(operation, e) from None


def _missing(exception: BaseException) -> bool:
    error = kafka_error(exception)
    return error is not None and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def describe(admin: Admin, timeout: float, topics: Sequence[str], names: Sequence[str], with_offsets: bool) -> List[Optional[TopicMetadata]]:
    op = "describe"
    unique = list(dict.fromkeys(topics))
    if not unique:
        return []
    try:
        # Both requests are in flight at once; the answers are awaited below.
        resources = {t: ConfigResource(ResourceType.TOPIC, t) for t in unique}
        configs = admin.describe_configs(list(resources.values()), request_timeout=timeout) if names else {}
        described = admin.describe_topics(TopicCollection(unique), request_timeout=timeout)
    except Exception as e:
        raise failure(op, e) from None
    from ._kafka_config import kafka_uuid

    found: Dict[str, Optional[TopicMetadata]] = {}
    for topic in unique:
        try:
            description = _wait(admin, described[topic], timeout)
        except Exception as e:
            if _missing(e):
                found[topic] = None  # an answer, not an error; its config error is expected too
                continue
            raise failure(op, e) from None
        entries = _result(op, admin, configs[resources[topic]], timeout) if names else {}
        uuid = description.topic_id
        found[topic] = TopicMetadata(
            topic,
            kafka_uuid(uuid.get_most_significant_bits(), uuid.get_least_significant_bits()),
            sorted(p.id for p in description.partitions),
            [(n, None if entries.get(n) is None else entries[n].value) for n in names],
            [],
            min((len(p.replicas) for p in description.partitions), default=0),
        )
    if with_offsets:
        existing = [m for m in found.values() if m is not None]
        wanted = [TopicPartition(m.topic, p) for m in existing for p in m.partitions]
        earliest, latest = _offsets(admin, timeout, wanted, False, True)
        for m in existing:
            found[m.topic] = m._replace(offsets=[(p, earliest[(m.topic, p)], latest[(m.topic, p)]) for p in m.partitions])
    return [found[t] for t in topics]


def describe_cluster(admin: Admin, timeout: float, names: Sequence[str]) -> ClusterDescription:
    """The brokers (DescribeCluster), then, when names are asked for, those configuration entries
    of the broker with the lowest ID (DescribeConfigs on its BROKER resource, which only that
    broker answers; without DescribeConfigs on the cluster it fails with
    CLUSTER_AUTHORIZATION_FAILED)."""
    op = "describe-cluster"
    try:
        cluster = admin.describe_cluster(request_timeout=timeout)
    except Exception as e:
        raise failure(op, e) from None
    brokers = sorted({node.id for node in _result(op, admin, cluster, timeout).nodes})
    if not names or not brokers:
        return ClusterDescription(brokers, [(n, None) for n in names])
    resource = ConfigResource(ResourceType.BROKER, str(brokers[0]))
    try:
        futures = admin.describe_configs([resource], request_timeout=timeout)
    except Exception as e:
        raise failure(op, e) from None
    (future,) = futures.values()
    entries = _result(op, admin, future, timeout)
    return ClusterDescription(brokers, [(n, None if entries.get(n) is None else entries[n].value) for n in names])


def _offsets(admin: Admin, timeout: float, partitions: List[TopicPartition], *latest: bool) -> List[Dict[Tuple[str, int], int]]:
    """ListOffsets with read_committed isolation ("latest" is the last stable offset), one
    answer per spec; the requests are all in flight before any answer is awaited."""
    if not partitions:
        return [{} for _ in latest]
    try:
        requests = [
            [
                admin.list_offsets({tp: OffsetSpec.latest() if spec else OffsetSpec.earliest() for tp in part}, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=timeout)
                for part in _slices(partitions)
            ]
            for spec in latest
        ]
    except Exception as e:
        raise failure("list-offsets", e) from None
    return [
        {(tp.topic, tp.partition): _result("list-offsets", admin, f, timeout).offset for futures in slices for tp, f in futures.items()}
        for slices in requests
    ]


def _why_no_leaders(admin: Admin, timeout: float, topic: str, error: CapabilityError) -> CapabilityError:
    """The failure to report for `error` of ListOffsets or DeleteRecords. Before either request
    librdkafka looks up the partitions' leaders, and when it finds none it answers only _NOENT
    ("No leaders found"), dropping the metadata's reason: the topic does not exist, or the
    principal may not describe it. One DescribeTopics of the topic tells the second apart (its
    TOPIC_AUTHORIZATION_FAILED, which the component classes as `authorization`); otherwise
    `error` stands."""
    if error.code != KafkaError._NOENT:
        return error
    try:
        _wait(admin, admin.describe_topics(TopicCollection([topic]), request_timeout=timeout)[topic], timeout)
    except Exception as e:
        reason = failure(error.operation, e)
        if reason.code == KafkaError.TOPIC_AUTHORIZATION_FAILED:
            return reason
    return error


def list_offsets(admin: Admin, timeout: float, topic: str, partitions: Sequence[int], latest: bool) -> List[Tuple[int, int]]:
    try:
        (answer,) = _offsets(admin, timeout, [TopicPartition(topic, p) for p in dict.fromkeys(partitions)], latest)
    except CapabilityError as e:
        raise _why_no_leaders(admin, timeout, topic, e) from None
    return sorted((p, o) for (_, p), o in answer.items())


def create_topic(admin: Admin, timeout: float, topic: str, partitions: int, replication_factor: int, configs: Dict[str, str]) -> bool:
    op = "create-topic"
    try:
        future = admin.create_topics(
            [NewTopic(topic, num_partitions=partitions, replication_factor=replication_factor, config=dict(configs))],
            request_timeout=timeout,
            operation_timeout=timeout,
        )[topic]
        _wait(admin, future, timeout)
    except Exception as e:
        error = kafka_error(e)
        if error is not None and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise failure(op, e) from None
    return True


def delete_records(admin: Admin, timeout: float, topic: str, before: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """DeleteRecords, each request sent once (wit/kafka-admin.wit): it names the topic only by
    name, so a request sent again after the topic was deleted could reach a topic recreated
    under that name. Nothing here resends, whatever the answer, and neither does librdkafka:
    before sending it looks the partitions' leaders up in the client's metadata cache,
    refreshing it at most once for a topic the cache does not hold, and a topic that does not
    exist there ends the call at once (_NOENT "No leaders found", or the broker's
    UNKNOWN_TOPIC_OR_PARTITION when a stale cache still named a leader), never waiting for the
    topic to appear; it leaves resending an admin request to that request's answer handler,
    and DeleteRecords' resends nothing. The conformance target `recreated-during-delete`
    (tests/test_conformance.py) checks this against the pinned confluent-kafka."""
    op = "delete-records"
    if not before:
        return []
    try:
        requests = [
            admin.delete_records([TopicPartition(topic, p, o) for p, o in part], request_timeout=timeout, operation_timeout=timeout)
            for part in _slices(list(before))
        ]
    except Exception as e:
        raise failure(op, e) from None
    try:
        return sorted((tp.partition, _result(op, admin, f, timeout).low_watermark) for futures in requests for tp, f in futures.items())
    except CapabilityError as e:
        raise _why_no_leaders(admin, timeout, topic, e) from None

"""The Kafka clients of one host (capability contract 0.3): the operator's librdkafka properties,
the per-request timeout, the client settings the WIT prescribes for each capability, and the
request counts. `KafkaCapabilities` is what the component's imports call."""

from __future__ import annotations

import base64
from typing import Dict, List, Optional, Sequence

from . import _kafka_admin as admin
from ._kafka_consumer import Consumer
from ._kafka_errors import failure, may_be_stale
from ._kafka_writer import Writer
from .model import RequestCounts


def kafka_uuid(most: int, least: int) -> str:
    """Kafka's `Uuid.toString()`: the 16 bytes (most significant half first) in URL-safe base64
    without padding; accepts the signed (Java long) or unsigned form of each half."""
    raw = (most & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big") + (least & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def transactional_id(control_topic: str) -> str:
    """The transactional id the component's writer of `control_topic` uses (the component
    computes it; this is for operators who grant the ACL). The host never derives one."""
    return f"action-state-cleanup:{control_topic}"


class KafkaCapabilities:
    """The capabilities over one cluster: an admin client created on first use, and writers and
    consumers the component opens. `timeout` (seconds) bounds one step of the component,
    retries included; each single request gets a third of it (at least a second, WIT `clock`),
    so that a request to a leader that died leaves time to ask the newly elected one."""

    def __init__(self, properties: Dict[str, str], timeout: float = 30.0) -> None:
        self.properties = dict(properties)
        self.timeout = float(timeout)
        self._admin: Optional[admin.Admin] = None
        #: Set by an answer that says the client's cached leaders or controller may be stale.
        self._stale = False
        self._counts = {"admin": 0, "control_reads": 0, "control_writes": 0, "consumer_polls": 0}

    @property
    def counts(self) -> RequestCounts:
        return RequestCounts(**self._counts)

    def count(self, kind: str) -> None:
        self._counts[kind] += 1

    def timeout_ms(self) -> int:
        return max(1, int(self.timeout * 1000))

    @property
    def request_timeout(self) -> float:
        return min(self.timeout, max(1.0, self.timeout / 3))

    def request_timeout_ms(self) -> int:
        return max(1, int(self.request_timeout * 1000))

    def config(self, **overrides: str) -> Dict[str, str]:
        config = dict(self.properties)
        config.update(overrides)
        return config

    def _client(self, operation: str) -> admin.Admin:
        self.count("admin")
        if self._admin is None:
            try:
                # librdkafka lets a producer-type client (an admin client is one) ask the broker
                # to create a topic its Metadata request names, and brokers do by default: the
                # metadata refresh in `_fresh` would bring a deleted topic back, empty. Never.
                self._admin = admin.Admin(self.config(**{"allow.auto.create.topics": "false"}))
            except Exception as e:  # invalid configuration
                raise failure(operation, e) from None
        return self._admin

    def _fresh(self, operation: str, topic: Optional[str], call):
        """Runs one admin call. librdkafka sends a request to the broker its metadata cache
        names (a partition's leader, the "controller"), and a broker that died stays there
        until the cache is refreshed; so after an answer that says the cache may be stale, the
        next call first re-reads the metadata once (no retry: the component decides those)."""
        client = self._client(operation)
        try:
            if self._stale:
                self._stale = False
                client.list_topics(topic=topic, timeout=self.request_timeout)
            return call(client)
        except Exception as e:
            error = failure(operation, e)
            if may_be_stale(error):
                self._stale = True
            raise error from None

    def describe(self, topics: Sequence[str], names: Sequence[str], with_offsets: bool) -> List[Optional[admin.TopicMetadata]]:
        return self._fresh("describe", topics[0] if topics else None, lambda c: admin.describe(c, self.request_timeout, topics, names, with_offsets))

    def describe_cluster(self, names: Sequence[str]) -> admin.ClusterDescription:
        # No metadata refresh first, even after a stale answer: DescribeCluster reads the brokers
        # afresh, and a refresh without a topic would read every topic's metadata.
        client = self._client("describe-cluster")
        try:
            return admin.describe_cluster(client, self.request_timeout, names)
        except Exception as e:
            error = failure("describe-cluster", e)
            if may_be_stale(error):
                self._stale = True
            raise error from None

    def create_topic(self, topic: str, partitions: int, replication_factor: int, configs: Dict[str, str]) -> bool:
        return self._fresh("create-topic", topic, lambda c: admin.create_topic(c, self.request_timeout, topic, partitions, replication_factor, configs))

    def list_offsets(self, topic: str, partitions: Sequence[int], latest: bool) -> List[tuple]:
        return self._fresh("list-offsets", topic, lambda c: admin.list_offsets(c, self.request_timeout, topic, partitions, latest))

    def delete_records(self, topic: str, before: Sequence[tuple]) -> List[tuple]:
        return self._fresh("delete-records", topic, lambda c: admin.delete_records(c, self.request_timeout, topic, before))

    def open_writer(self, transactional_id: Optional[str]) -> Writer:
        ms = str(self.request_timeout_ms())
        config = self.config(**{"enable.idempotence": "true", "acks": "all", "linger.ms": "0", "request.timeout.ms": ms, "message.timeout.ms": ms})
        if transactional_id is not None:
            # 15 minutes is the brokers' default transaction.max.timeout.ms.
            config.update({"transactional.id": transactional_id, "transaction.timeout.ms": str(min(self.timeout_ms(), 900_000)), "enable.sparse.connections": "false"})
        return Writer(config, transactional_id is not None, self.request_timeout)

    def open_consumer(self, topic: str) -> Consumer:
        return Consumer(
            self.config(**{
                "group.id": "action-state-cleanup",
                "enable.auto.commit": "false",
                "auto.offset.reset": "error",
                "isolation.level": "read_committed",
                "fetch.queue.backoff.ms": "10",
                "enable.partition.eof": "false",
            }),
            topic,
        )

    def close(self) -> None:
        self._admin = None

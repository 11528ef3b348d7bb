"""Kafka capabilities over confluent-kafka (librdkafka): the host half of the WIT imports, the
same calls as the Rust reference host (host/src/kafka). Each method is one capability call,
bounded by the configured timeout, counted, and fails only with `CapabilityError`.

Nothing here decides whether something is safe: the component asks, this module answers.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from confluent_kafka import (
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

from .model import RequestCounts

T = TypeVar("T")

#: Error codes the Rust host treats as retriable (host/src/kafka/ffi.rs `is_retriable`).
_RETRIABLE = {
    KafkaError._TIMED_OUT,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError._TRANSPORT,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError._ALL_BROKERS_DOWN,
}


class CapabilityError(Exception):
    """A failed capability call: becomes the WIT `kafka-error` record."""

    def __init__(self, operation: str, message: str, retriable: bool = False) -> None:
        super().__init__(f"Kafka {operation} failed: {message}")
        self.operation = operation
        self.message = message
        self.retriable = retriable


class AppendFenced(Exception):
    """A fenced append that another writer fenced out (or that had no fenced writer): becomes the
    `fenced` case of the WIT `append-error`. The record was not written."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"fenced: {reason}")
        self.reason = reason


class _Attempt(Exception):
    """One failed attempt of a request that may be retried: the client's exception and where."""

    def __init__(self, cause: BaseException, context: str = "") -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.context = context


def _kafka_error(exception: BaseException) -> Optional[KafkaError]:
    if isinstance(exception, KafkaException) and exception.args and isinstance(exception.args[0], KafkaError):
        return exception.args[0]
    return None


def _describe(error: KafkaError) -> str:
    """`NAME: description`, like the Rust host's librdkafka messages."""
    name, text = error.name(), error.str()
    return f"{name}: {text}" if text and text != name else name


def _retriable(error: KafkaError) -> bool:
    return error.code() in _RETRIABLE or bool(error.retriable())


def _failure(operation: str, exception: BaseException, context: str = "") -> CapabilityError:
    prefix = f"{context}: " if context else ""
    error = _kafka_error(exception)
    if error is not None:
        return CapabilityError(operation, prefix + _describe(error), _retriable(error))
    if isinstance(exception, CapabilityError):
        return exception
    if isinstance(exception, TimeoutError):
        return CapabilityError(operation, f"{prefix}timed out", True)
    return CapabilityError(operation, f"{prefix}{type(exception).__name__}: {exception}", False)


def kafka_uuid(most: int, least: int) -> str:
    """Kafka's `Uuid.toString()`: the 16 bytes (most significant half first, big-endian) in
    URL-safe base64 without padding: 22 characters. Same as `kafka_uuid` in host/src/kafka/ffi.rs;
    accepts the signed (Java long) or unsigned form of each half."""
    raw = (most & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big") + (least & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


#: Error codes that mean another transactional producer with the same transactional id took over
#: (the Rust host's `fence::is_fencing`).
_FENCING = {
    KafkaError._FENCED,
    KafkaError.PRODUCER_FENCED,
    KafkaError.INVALID_PRODUCER_EPOCH,
    KafkaError.INVALID_TXN_STATE,
}


def transactional_id(control_topic: str) -> str:
    """The transactional id of a control topic's writer: one per control topic, every host alike
    (`fence::transactional_id` of the Rust host), so that applies from any host fence each other."""
    return f"action-state-cleanup:{control_topic}"


class FencedWriter:
    """The only writer of one control topic once `init_transactions` returned: a transactional
    producer whose transactional id derives from the topic (host/src/kafka/fence.rs). Each append
    is its own transaction; a writer fenced by a newer one fails with `AppendFenced`."""

    def __init__(self, config: Dict[str, object], topic: str, timeout: float) -> None:
        self.topic = topic
        self.timeout = timeout
        #: The last fatal error librdkafka reported through `error_cb` (what `fatal_error()`
        #: answers in the Rust host).
        self._fatal: Optional[KafkaError] = None
        config = dict(config)
        config.update(
            {
                "transactional.id": transactional_id(topic),
                "enable.idempotence": "true",
                "acks": "all",
                "linger.ms": "0",
                "transaction.timeout.ms": str(max(1000, int(timeout * 1000))),
                "error_cb": self._on_error,
            }
        )
        op = "fence-control"
        try:
            self._producer: Optional[Producer] = Producer(config)
        except Exception as e:
            raise _fence_failure(op, e) from None
        try:
            # Fences every earlier writer of this id and completes or aborts its open
            # transaction before returning.
            self._producer.init_transactions(timeout)
        except BaseException as e:
            self.close()
            if isinstance(e, Exception):
                raise _fence_failure(op, e) from None
            raise

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal():
            self._fatal = error

    def _live(self) -> Producer:
        if self._producer is None:
            raise AppendFenced(f"the writer of control topic {self.topic} was closed")
        return self._producer

    def append(self, key: str, value: str) -> int:
        """Writes one record to partition 0 in its own transaction; returns its offset once the
        transaction is committed. Raises `AppendFenced` when another writer fenced this one,
        `CapabilityError` for any other failure (the transaction is aborted)."""
        producer = self._live()
        try:
            producer.begin_transaction()
        except Exception as e:
            raise self._failure(e, aborted=False) from None
        outcome: List[Tuple[Optional[KafkaError], int]] = []

        def delivered(error, message) -> None:
            outcome.append((error, -1 if message is None else message.offset()))

        try:
            producer.produce(self.topic, value=value, key=key, partition=0, on_delivery=delivered)
            deadline = time.monotonic() + self.timeout + 5
            while not outcome and time.monotonic() < deadline:
                producer.poll(min(0.5, max(0.0, deadline - time.monotonic())))
        except Exception as e:
            raise self._failure(e) from None
        except BaseException:
            self._abort()  # interrupted: leave no transaction open on this producer
            raise
        if not outcome:
            raise self._failure(CapabilityError("append-control", f"no acknowledgement within {self.timeout:g}s", False))
        error, offset = outcome[0]
        if error is not None:
            # A fenced producer purges what it had queued: the delivery reports only the purge,
            # the fatal error (seen by the abort) says why.
            raise self._failure(KafkaException(error))
        try:
            producer.commit_transaction(self.timeout)
        except Exception as e:
            raise self._failure(e) from None
        except BaseException:
            self._abort()
            raise
        return max(0, offset)

    def _abort(self) -> Optional[KafkaError]:
        """Aborts the open transaction; returns the error the abort raised (a fatal producer
        raises its fatal error from every transactional call)."""
        producer = self._producer
        if producer is None:
            return None
        try:
            producer.abort_transaction(self.timeout)
        except Exception as e:
            return _kafka_error(e)
        return None

    def _failure(self, exception: BaseException, aborted: bool = True) -> Exception:
        """`AppendFenced` when the producer was fenced (its fatal error, or the failed call's
        error, is a fencing code), else the `CapabilityError` of `append-control`, not
        retriable (fence.rs `failure`). Aborts the transaction first unless `aborted` is False."""
        abort_error = self._abort() if aborted else None
        producer = self._producer
        if producer is not None:
            try:
                producer.poll(0)  # serves error_cb, which records a fatal error
            except Exception:
                pass
        error = _kafka_error(exception)
        fatal = self._fatal
        if fatal is None:
            for candidate in (abort_error, error):
                if candidate is not None and candidate.fatal():
                    fatal = candidate
                    break
        if fatal is not None and fatal.code() in _FENCING:
            return AppendFenced(_describe(fatal))
        if error is not None and error.code() in _FENCING:
            return AppendFenced(_describe(error))
        if isinstance(exception, CapabilityError):
            return exception
        failure = _failure("append-control", exception)
        failure.retriable = False
        return failure

    def close(self) -> None:
        """Drops the producer (nothing is pending: every append completed its transaction)."""
        producer, self._producer = self._producer, None
        if producer is None:
            return
        try:
            producer.purge()
            producer.flush(0)
        except Exception:
            pass


def _fence_failure(operation: str, exception: BaseException) -> CapabilityError:
    failure = _failure(operation, exception)
    failure.retriable = False  # as the Rust host's fence: a new fence is the guest's decision
    return failure


@dataclass(frozen=True)
class DescribedTopic:
    topic: str
    topic_id: str
    partitions: List[int]


@dataclass(frozen=True)
class Consumed:
    partition: int
    offset: int
    key: Optional[str]
    value: Optional[str]
    #: Why the key or value is not valid UTF-8 (they then hold a lossy rendering).
    decode_error: Optional[str] = None


def _decode(what: str, data: Optional[bytes], problems: List[str]) -> Optional[str]:
    """Strict UTF-8: the text, or a lossy rendering plus the reason (like the Rust host)."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.append(f"the {what} is not valid UTF-8 (invalid byte at position {e.start})")
        return data.decode("utf-8", errors="replace")


def _text(data: Optional[bytes]) -> Optional[str]:
    """Keys and values cross as text; invalid UTF-8 is replaced like Rust's `from_utf8_lossy`."""
    if data is None:
        return None
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")


def _described(topic: str, description) -> DescribedTopic:
    uuid = description.topic_id
    topic_id = kafka_uuid(uuid.get_most_significant_bits(), uuid.get_least_significant_bits())
    return DescribedTopic(topic, topic_id, sorted(p.id for p in description.partitions))


class KafkaCapabilities:
    """The Kafka clients of one host, created on first use and reused."""

    def __init__(self, properties: Dict[str, str], timeout: float = 30.0) -> None:
        self.properties = dict(properties)
        self.timeout = float(timeout)
        self._admin: Optional[AdminClient] = None
        self._producer: Optional[Producer] = None
        #: The fenced writer of the control topic this host fenced last (`fence_control`).
        self._writer: Optional[FencedWriter] = None
        self._admin_calls = 0
        self._control_reads = 0
        self._control_writes = 0
        self._consumer_polls = 0

    # --- bookkeeping -------------------------------------------------------------------------

    @property
    def counts(self) -> RequestCounts:
        return RequestCounts(self._admin_calls, self._control_reads, self._control_writes, self._consumer_polls)

    def count_poll(self) -> None:
        self._consumer_polls += 1

    def config(self, **overrides: str) -> Dict[str, str]:
        config = dict(self.properties)
        config.update(overrides)
        return config

    def _admin_client(self, operation: str) -> AdminClient:
        if self._admin is None:
            try:
                self._admin = AdminClient(self.config())
            except Exception as e:  # invalid configuration
                raise _failure(operation, e) from None
        self._admin_calls += 1
        return self._admin

    def _wait(self, operation: str, future, context: str = "") -> object:
        # Futures resolve within the request timeout; the margin matches the Rust host's.
        try:
            return future.result(timeout=self.timeout + 5)
        except Exception as e:
            raise _failure(operation, e, context) from None

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._producer is not None:
            self._producer.flush(self.timeout)
            self._producer = None
        self._admin = None

    # --- kafka-admin -------------------------------------------------------------------------

    def describe_topics(self, topics: Sequence[str]) -> List[Optional[DescribedTopic]]:
        op = "describe-topics"
        if not topics:
            return []
        admin = self._admin_client(op)
        try:
            futures = admin.describe_topics(TopicCollection(list(dict.fromkeys(topics))), request_timeout=self.timeout)
        except Exception as e:
            raise _failure(op, e) from None
        answers: Dict[str, Optional[DescribedTopic]] = {}
        for topic, future in futures.items():
            try:
                description = future.result(timeout=self.timeout + 5)
            except Exception as e:
                error = _kafka_error(e)
                if error is not None and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    answers[topic] = None
                    continue
                raise _failure(op, e) from None
            answers[topic] = _described(topic, description)
        return [answers.get(topic) for topic in topics]

    def describe_configs(self, topics: Sequence[str], names: Sequence[str]) -> List[List[Tuple[str, Optional[str]]]]:
        op = "describe-configs"
        if not topics:
            return []
        admin = self._admin_client(op)
        resources = [ConfigResource(ResourceType.TOPIC, topic) for topic in topics]
        try:
            futures = admin.describe_configs(resources, request_timeout=self.timeout)
        except Exception as e:
            raise _failure(op, e) from None
        answer = []
        for topic, resource in zip(topics, resources):
            entries = self._wait(op, futures[resource], f"topic {topic}")
            row = []
            for name in names:
                entry = entries.get(name)  # type: ignore[union-attr]
                row.append((name, None if entry is None else entry.value))
            answer.append(row)
        return answer

    def inspect_topics(
        self, topics: Sequence[str], names: Sequence[str]
    ) -> List[Optional[Tuple[DescribedTopic, List[Tuple[str, Optional[str]]]]]]:
        """Describes the topics and reads the named configuration entries with both requests in
        flight at once (one round trip, one admin request). A topic that does not exist comes
        back as None; its configuration error is expected and ignored (`inspect_topics` of the
        Rust host)."""
        op = "inspect-topics"
        if not topics:
            return []
        unique = list(dict.fromkeys(topics))
        admin = self._admin_client(op)
        resources = {topic: ConfigResource(ResourceType.TOPIC, topic) for topic in unique}
        try:
            # Both calls only enqueue their request; the answers are awaited below.
            config_futures = admin.describe_configs(list(resources.values()), request_timeout=self.timeout)
            topic_futures = admin.describe_topics(TopicCollection(unique), request_timeout=self.timeout)
        except Exception as e:
            raise _failure(op, e) from None
        described: Dict[str, Optional[DescribedTopic]] = {}
        for topic, future in topic_futures.items():
            try:
                description = future.result(timeout=self.timeout + 5)
            except Exception as e:
                error = _kafka_error(e)
                if error is not None and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    described[topic] = None
                    continue
                raise _failure(op, e) from None
            described[topic] = _described(topic, description)
        states: Dict[str, Optional[Tuple[DescribedTopic, List[Tuple[str, Optional[str]]]]]] = {}
        for topic in unique:
            future = config_futures[resources[topic]]
            description = described.get(topic)
            if description is None:
                states[topic] = None
                continue
            entries = self._wait(op, future, f"configuration of topic {topic}")
            values = []
            for name in names:
                entry = entries.get(name)  # type: ignore[union-attr]
                values.append((name, None if entry is None else entry.value))
            states[topic] = (description, values)
        return [states[topic] for topic in topics]

    def offset_range(self, topic: str, partitions: Sequence[int]) -> List[Tuple[int, int, int]]:
        """(partition, beginning, end) of each partition: the earliest and the latest
        (read_committed: the last stable offset) ListOffsets requests are in flight at once.
        Retriable errors are asked again like `list_offsets`; each attempt is one admin request."""
        op = "offset-range"
        if not partitions:
            return []
        deadline = time.monotonic() + self.timeout
        while True:
            admin = self._admin_client(op)
            try:
                earliest, latest = self._start_list_offsets(admin, topic, partitions, False), self._start_list_offsets(admin, topic, partitions, True)
                beginnings = self._finish_list_offsets(op, earliest)
                ends = self._finish_list_offsets(op, latest)
            except _Attempt as failed:
                error = _kafka_error(failed.cause)
                if error is not None and error.code() in _RETRIABLE and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                raise _failure(op, failed.cause, failed.context) from None
            return [(p, beginnings[p], ends[p]) for p in dict.fromkeys(partitions) if p in beginnings and p in ends]

    def create_topic(self, topic: str, partitions: int, replication_factor: int, configs: Dict[str, str]) -> bool:
        op = "create-topic"
        if partitions > 2**31 - 1:
            raise CapabilityError(op, f"{partitions} partitions is too many")
        admin = self._admin_client(op)
        new_topic = NewTopic(topic, num_partitions=partitions, replication_factor=replication_factor, config=dict(configs))
        try:
            futures = admin.create_topics([new_topic], request_timeout=self.timeout, operation_timeout=self.timeout)
        except Exception as e:
            raise _failure(op, e) from None
        future = futures.get(topic)
        if future is None:
            raise CapabilityError(op, "no result", True)
        try:
            future.result(timeout=self.timeout + 5)
        except Exception as e:
            error = _kafka_error(e)
            if error is not None and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                return False
            raise _failure(op, e, f"topic {topic}") from None
        self._await_topic(topic, partitions)
        return True

    def _await_topic(self, topic: str, partitions: int) -> None:
        """Creation is asynchronous: waits (within the timeout) until describe-topics shows every
        partition (the WIT contract of create-topic)."""
        deadline = time.monotonic() + self.timeout
        while True:
            (described,) = self.describe_topics([topic])
            if described is not None and len(described.partitions) == partitions:
                return
            if time.monotonic() > deadline:
                raise CapabilityError(
                    "create-topic",
                    f"topic {topic} was created but did not appear in metadata within {self.timeout:g}s",
                    True,
                )
            time.sleep(0.05)

    def list_offsets(self, topic: str, partitions: Sequence[int], latest: bool) -> List[Tuple[int, int]]:
        """Earliest (log start) or latest offsets with read_committed isolation, so "latest" is
        the last stable offset under transactions.

        Read-only, so a request that fails with one of the retriable codes (`_RETRIABLE`, the
        Rust host's `is_retriable`: a leader still being elected right after the topic was
        created or a broker restarted, a timeout, a lost connection) is sent again every 100 ms
        until `timeout` has passed since the first attempt, like `KafkaClients::list_offsets`;
        any other error is reported at once. Each attempt counts as one admin request."""
        op = "list-offsets"
        if not partitions:
            return []
        deadline = time.monotonic() + self.timeout
        while True:
            admin = self._admin_client(op)
            try:
                return self._list_offsets_once(admin, topic, partitions, latest)
            except _Attempt as failed:
                error = _kafka_error(failed.cause)
                if error is not None and error.code() in _RETRIABLE and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                raise _failure(op, failed.cause, failed.context) from None

    def _list_offsets_once(self, admin: AdminClient, topic: str, partitions: Sequence[int], latest: bool) -> List[Tuple[int, int]]:
        by_partition = self._finish_list_offsets("list-offsets", self._start_list_offsets(admin, topic, partitions, latest))
        return [(p, by_partition[p]) for p in partitions]

    def _start_list_offsets(self, admin: AdminClient, topic: str, partitions: Sequence[int], latest: bool) -> Dict[TopicPartition, object]:
        """Sends one ListOffsets request (read_committed) and returns its futures."""
        spec = OffsetSpec.latest() if latest else OffsetSpec.earliest()
        request = {TopicPartition(topic, int(p)): spec for p in dict.fromkeys(partitions)}
        try:
            return admin.list_offsets(request, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=self.timeout)
        except Exception as e:
            raise _Attempt(e) from None

    def _finish_list_offsets(self, operation: str, futures: Dict[TopicPartition, object]) -> Dict[int, int]:
        by_partition: Dict[int, int] = {}
        for tp, future in futures.items():
            try:
                info = future.result(timeout=self.timeout + 5)  # type: ignore[attr-defined]
            except Exception as e:
                raise _Attempt(e, f"partition {tp.partition}") from None
            offset = info.offset
            if offset < 0:
                raise CapabilityError(operation, f"partition {tp.partition} reported offset {offset}")
            by_partition[tp.partition] = offset
        return by_partition

    def delete_records(self, topic: str, before: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
        op = "delete-records"
        if not before:
            return []
        for partition, offset in before:
            if partition > 2**31 - 1 or offset > 2**63 - 1:
                raise CapabilityError(op, f"partition {partition} offset {offset} out of range")
        admin = self._admin_client(op)
        request = [TopicPartition(topic, int(p), int(o)) for p, o in before]
        try:
            futures = admin.delete_records(request, request_timeout=self.timeout, operation_timeout=self.timeout)
        except Exception as e:
            raise _failure(op, e) from None
        by_partition: Dict[int, int] = {}
        for tp, future in futures.items():
            deleted = self._wait(op, future, f"{topic}-{tp.partition}")
            by_partition[tp.partition] = max(0, deleted.low_watermark)  # type: ignore[attr-defined]
        return [(p, by_partition[p]) for p, _ in before if p in by_partition]

    # --- control-log -------------------------------------------------------------------------

    def read_control_log(self, topic: str) -> List[Tuple[int, Optional[str], Optional[str]]]:
        """Reads partition 0 of `topic` from its beginning to its last stable offset captured at
        the start (both from read_committed ListOffsets), read_committed, explicit assignment, no
        commits; the position moves past transaction markers, which are never delivered."""
        self._control_reads += 1
        op = "read-control-log"
        try:
            consumer = Consumer(
                self.config(
                    **{
                        "group.id": "action-state-cleanup-control-reader",
                        "enable.auto.commit": "false",
                        "enable.auto.offset.store": "false",
                        "isolation.level": "read_committed",
                        "auto.offset.reset": "error",
                        "enable.partition.eof": "true",
                    }
                )
            )
        except Exception as e:
            raise _failure(op, e) from None
        try:
            # The end is the last stable offset (read_committed ListOffsets), not the high
            # watermark: a transaction another writer still has open is not waited for, since
            # none of it is committed. Both lookups count as part of this control-topic read.
            admin_before = self._admin_calls
            ((_, low),) = self.list_offsets(topic, [0], latest=False)
            ((_, high),) = self.list_offsets(topic, [0], latest=True)
            self._admin_calls = admin_before
            records: List[Tuple[int, Optional[str], Optional[str]]] = []
            if high <= low:
                return records
            try:
                consumer.assign([TopicPartition(topic, 0, low)])
            except Exception as e:
                raise _failure(op, e) from None
            deadline = time.monotonic() + self.timeout
            position = low
            while position < high:
                if time.monotonic() > deadline:
                    raise CapabilityError(
                        op,
                        f"timed out after {self.timeout:g}s reading control topic {topic} at offset {position} of {high}",
                        True,
                    )
                message = consumer.poll(0.2)
                error = None if message is None else message.error()
                if message is not None and error is None:
                    offset = message.offset()
                    if offset < high:
                        records.append((offset, _text(message.key()), _text(message.value())))
                    position = offset + 1
                elif message is None or error.code() == KafkaError._PARTITION_EOF:
                    # Transaction markers occupy offsets but are never delivered: trust the
                    # consumer's position once it has fetched past them.
                    try:
                        (current,) = consumer.position([TopicPartition(topic, 0)])
                        if current.offset >= 0:
                            position = max(position, current.offset)
                    except Exception:
                        pass
                else:
                    raise CapabilityError(op, _describe(error), _retriable(error))
            return records
        finally:
            consumer.close()

    def fence_control(self, topic: str) -> None:
        """Becomes the only writer of `topic`: a new transactional producer (transactional id
        `transactional_id(topic)`) is initialised, which fences every earlier writer of the
        topic, from any host, and completes or aborts its open transaction. Replaces the
        writer of any topic this host fenced before."""
        self._admin_calls += 1
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        self._writer = FencedWriter(self.config(), topic, self.timeout)

    def append_control(self, topic: str, key: str, value: str, fenced: bool = False) -> int:
        """Appends one record to partition 0 of the control topic and returns its offset.

        With `fenced`, the record is written in a transaction of the writer `fence_control`
        created for `topic`; `AppendFenced` when another writer fenced it since (or this host
        did not fence `topic`). The append then returns only once the record is visible to
        read_committed readers. Without, the idempotent producer writes it (acks=all)."""
        self._control_writes += 1
        if not fenced:
            return self.produce("append-control", topic, 0, key, value)
        writer = self._writer
        if writer is None or writer.topic != topic:
            raise AppendFenced(f"this host did not fence control topic {topic}")
        offset = writer.append(key, value)
        # A committed transaction becomes visible to read_committed readers only once its
        # marker is written, shortly after the commit returns: wait for that, so every reader
        # (a restore, a status, the next apply) sees this record once the append has returned.
        self._await_stable(topic, offset)
        return offset

    def _await_stable(self, topic: str, offset: int) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            ((_, stable),) = self.list_offsets(topic, [0], latest=True)
            if stable > offset:
                return
            if time.monotonic() > deadline:
                raise CapabilityError(
                    "append-control",
                    f"committed record at offset {offset} of {topic} did not become visible within {self.timeout:g}s",
                    True,
                )
            time.sleep(0.02)

    def _producer_for(self, operation: str) -> Producer:
        if self._producer is None:
            try:
                self._producer = Producer(
                    self.config(
                        **{
                            "enable.idempotence": "true",
                            "acks": "all",
                            "linger.ms": "0",
                            "message.timeout.ms": str(int(self.timeout * 1000)),
                        }
                    )
                )
            except Exception as e:
                raise _failure(operation, e) from None
        return self._producer

    def produce(self, operation: str, topic: str, partition: int, key: Optional[str], value: Optional[str]) -> int:
        """Produces one record with acks=all and idempotence, waits for the acknowledgement and
        returns its offset. Also used by tests to write data records and tombstones."""
        producer = self._producer_for(operation)
        outcome: List[Tuple[Optional[KafkaError], int]] = []

        def delivered(error, message) -> None:
            outcome.append((error, -1 if message is None else message.offset()))

        try:
            producer.produce(topic, value=value, key=key, partition=partition, on_delivery=delivered)
        except Exception as e:
            raise _failure(operation, e) from None
        deadline = time.monotonic() + self.timeout + 5
        while not outcome and time.monotonic() < deadline:
            producer.poll(min(0.5, max(0.0, deadline - time.monotonic())))
        if not outcome:
            raise CapabilityError(operation, f"no acknowledgement within {self.timeout:g}s", True)
        error, offset = outcome[0]
        if error is not None:
            raise CapabilityError(operation, _describe(error), _retriable(error))
        return max(0, offset)

    def produce_batch(self, topic: str, records: Sequence[Tuple[int, str, str]]) -> None:
        """Produces many records (partition, key, value) and waits for every acknowledgement."""
        op = "produce"
        if not records:
            return
        producer = self._producer_for(op)
        failures: List[KafkaError] = []

        def delivered(error, _message) -> None:
            if error is not None:
                failures.append(error)

        try:
            for partition, key, value in records:
                while True:
                    try:
                        producer.produce(topic, value=value, key=key, partition=partition, on_delivery=delivered)
                        break
                    except BufferError:
                        producer.poll(0.1)
        except Exception as e:
            raise _failure(op, e) from None
        remaining = producer.flush(self.timeout + 5)
        if failures:
            raise CapabilityError(op, _describe(failures[0]), _retriable(failures[0]))
        if remaining:
            raise CapabilityError(op, f"{remaining} records unacknowledged after {self.timeout:g}s", True)

    # --- kafka-consumer ----------------------------------------------------------------------

    def replay_consumer(self, topic: str) -> "ReplayConsumer":
        return ReplayConsumer(self.config(), topic)


class ReplayConsumer:
    """An assign-and-seek consumer of one topic: no group membership, no offset commits."""

    def __init__(self, config: Dict[str, str], topic: str) -> None:
        self.topic = topic
        self._failure: Optional[CapabilityError] = None
        self._consumer: Optional[Consumer] = None
        #: A consumer error that arrived after records of the same poll: reported by the next
        #: poll, so that the records taken from the consumer before it are not lost.
        self._deferred: Optional[CapabilityError] = None
        config = dict(config)
        # An assign-only consumer still needs a group id; it never joins or commits.
        config.update(
            {
                "group.id": "action-state-cleanup-replay",
                "enable.auto.commit": "false",
                "enable.auto.offset.store": "false",
                "auto.offset.reset": "error",
                "isolation.level": "read_committed",
                # As the Rust host: a replay briefly behind the fetcher must not idle for the
                # default 1 s queue back-off.
                "fetch.queue.backoff.ms": "10",
            }
        )
        try:
            self._consumer = Consumer(config)
        except Exception as e:
            # Reported by the first capability call, like the Rust host's broken consumer.
            self._failure = _failure("consumer-create", e)

    def _live(self) -> Consumer:
        if self._consumer is None:
            raise self._failure or CapabilityError("consumer-create", "consumer closed")
        return self._consumer

    def assign(self, start: Sequence[Tuple[int, int]]) -> None:
        op = "consumer-assign"
        # A new assignment starts over: an error of the old one no longer applies.
        self._deferred = None
        for partition, offset in start:
            if partition > 2**31 - 1 or offset > 2**63 - 1:
                raise CapabilityError(op, f"partition {partition} offset {offset} out of range")
        try:
            self._live().assign([TopicPartition(self.topic, int(p), int(o)) for p, o in start])
        except CapabilityError:
            raise
        except Exception as e:
            raise _failure(op, e) from None

    def position(self) -> List[Tuple[int, int]]:
        """Fetch positions of the assigned partitions whose position is known."""
        op = "consumer-position"
        consumer = self._live()
        try:
            positions = consumer.position(consumer.assignment())
        except Exception as e:
            raise _failure(op, e) from None
        return [(tp.partition, tp.offset) for tp in positions if tp.offset >= 0 and tp.error is None]

    def poll(self, max_records: int, timeout_ms: int) -> List[Consumed]:
        """Waits up to `timeout_ms` for the first record, then takes what is already buffered.

        A consumer error fails the poll only when no record was taken yet; after records it is
        kept for the next poll. The consumer's position is already past every record it
        delivered, and the guest trusts that position to skip offsets that hold nothing, so
        records dropped here would never be replayed."""
        consumer = self._live()
        if self._deferred is not None:
            deferred, self._deferred = self._deferred, None
            raise deferred
        batch: List[Consumed] = []
        deadline = time.monotonic() + timeout_ms / 1000.0
        wait = timeout_ms / 1000.0
        while len(batch) < max_records:
            try:
                message = consumer.poll(wait)
            except Exception as e:
                failure = _failure("consumer-poll", e)
                if not batch:
                    raise failure from None
                self._deferred = failure
                break
            if message is not None:
                error = message.error()
                if error is not None:
                    failure = CapabilityError("consumer-poll", _describe(error), True)
                    if not batch:
                        raise failure
                    self._deferred = failure
                    break
                problems: List[str] = []
                key = _decode("key", message.key(), problems)
                value = _decode("value", message.value(), problems)
                batch.append(Consumed(message.partition(), message.offset(), key, value, problems[0] if problems else None))
                wait = 0.0
            elif not batch and time.monotonic() < deadline:
                wait = max(0.0, deadline - time.monotonic())
            else:
                break
        return batch

    def close(self) -> None:
        if self._consumer is not None:
            try:
                self._consumer.close()
            finally:
                self._consumer = None


def guarded(operation: str, call: Callable[[], T]) -> T:
    """Runs one capability, turning any exception into `CapabilityError` (never a trap)."""
    try:
        return call()
    except CapabilityError:
        raise
    except Exception as e:
        raise _failure(operation, e) from None

"""`kafka-consumer.consumer` over a confluent-kafka Consumer: assign-and-seek, read_committed,
never a group member. It keeps the records of its latest poll (the component's replay batches
index into them) and an error that arrived after records, for the next poll."""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from confluent_kafka import Consumer as KafkaConsumer
from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, KafkaException, TopicPartition

from ._kafka_errors import CapabilityError, failure


class Polled(NamedTuple):
    """What the component sees of one record (`polled-record`), plus the record's texts."""

    partition: int
    offset: int
    has_key: bool
    has_value: bool
    utf8: bool
    key: Optional[str]
    value: Optional[str]
    #: Milliseconds since the Unix epoch (CreateTime or LogAppendTime); -1 when it has none.
    timestamp: int = -1


def _text(data: Any) -> Tuple[Optional[str], bool]:
    if data is None or isinstance(data, str):
        return data, True
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return None, False


def polled(message: Any) -> Polled:
    key, key_ok = _text(message.key())
    value, value_ok = _text(message.value())
    utf8 = key_ok and value_ok
    kind, at = message.timestamp()
    return Polled(message.partition(), message.offset(), message.key() is not None, message.value() is not None, utf8,
                  key if utf8 else None, value if utf8 else None,
                  at if kind != TIMESTAMP_NOT_AVAILABLE else -1)


class Consumer:
    def __init__(self, config: Dict[str, str], topic: str) -> None:
        self.topic = topic
        #: The records of the latest poll, as the client delivered them.
        self.last: List[Polled] = []
        self._kept: Optional[CapabilityError] = None
        self._pending: List[Any] = []
        try:
            self._consumer: Optional[KafkaConsumer] = KafkaConsumer(config)
        except Exception as e:
            raise failure("open-consumer", e) from None

    def _client(self) -> KafkaConsumer:
        if self._consumer is None:
            raise CapabilityError("consumer", "the consumer was closed")
        return self._consumer

    def assign(self, start: Sequence[Tuple[int, int]]) -> None:
        self._kept, self._pending, self.last = None, [], []
        try:
            self._client().assign([TopicPartition(self.topic, p, o) for p, o in start])
        except KafkaException as e:
            raise failure("assign", e) from None

    def position(self) -> List[Tuple[int, int]]:
        client = self._client()
        try:
            positions = client.position(client.assignment())
        except KafkaException as e:
            raise failure("position", e) from None
        # Records kept for the next poll count as delivered for the client but not for the
        # component: their partitions stay at the first of them.
        held_back: Dict[int, int] = {}
        for message in self._pending:
            if message.error() is None:
                held_back[message.partition()] = min(held_back.get(message.partition(), message.offset()), message.offset())
        return sorted(
            (tp.partition, min(tp.offset, held_back.get(tp.partition, tp.offset))) for tp in positions if tp.offset >= 0
        )

    def poll(self, max_records: int, timeout_ms: int) -> List[Polled]:
        """At most `max_records` records within `timeout_ms`; an error event after records is
        kept and raised by the next poll."""
        self.last = []
        if self._kept is not None:
            kept, self._kept = self._kept, None
            raise kept
        messages, self._pending = self._pending, []
        try:
            messages = messages or self._client().consume(max(1, max_records), timeout_ms / 1000)
        except KafkaException as e:
            raise failure("poll", e) from None
        records = []
        for index, message in enumerate(messages):
            if message.error() is not None:
                # What the client delivered after the error waits for the next poll.
                error, self._pending = failure("poll", KafkaException(message.error())), messages[index + 1 :]
                if not records:
                    raise error
                self._kept = error
                break
            records.append(polled(message))
        self.last = records
        return records

    def close(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            try:
                consumer.close()
            except Exception:
                pass

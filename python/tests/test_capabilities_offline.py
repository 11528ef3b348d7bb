"""The Python host's only decisions, against scripted confluent-kafka objects: the mapping of
client error codes to the WIT `kafka-error` cases, the consumer's error kept for the next poll
when it arrives after records, and a fenced transactional append reported as `fenced` even when
the delivery report only says the message was purged. Everything else a capability does is
checked against a broker by the conformance suite (test_conformance.py)."""

from __future__ import annotations

from typing import Optional

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_NOT_AVAILABLE, KafkaError, KafkaException, TopicPartition

from action_state_cleanup._kafka_config import KafkaCapabilities, transactional_id
from action_state_cleanup._kafka_consumer import Consumer as ReplayConsumer
from action_state_cleanup._kafka_errors import AppendFenced, CapabilityError
from action_state_cleanup._component import kafka_error, polled_batch
from action_state_cleanup._kafka_errors import CASES, failure
from action_state_cleanup._kafka_writer import Writer


@pytest.mark.parametrize("case, code", [(case, code) for case, codes in CASES.items() for code in codes])
def test_every_listed_code_maps_to_its_wit_case(case: str, code: int):
    error = failure("list-offsets", KafkaException(KafkaError(code)))
    assert (error.case, error.code, error.operation) == (case, code, "list-offsets")
    assert isinstance(error, AppendFenced) == (case == "fenced")
    value = kafka_error(error)
    assert value.tag == case and value.payload.code == code and value.payload.name == KafkaError(code).name()


@pytest.mark.parametrize(
    "code",
    [KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.PRODUCER_FENCED],
)
def test_a_brokers_protocol_code_is_reported_as_it_came_for_the_component_to_classify(code: int):
    error = failure("list-offsets", KafkaException(KafkaError(code)))
    assert (error.case, error.code, error.name) == ("other", code, KafkaError(code).name())
    assert not isinstance(error, AppendFenced)


def test_the_metadata_is_read_again_after_a_brokers_error_or_a_lost_connection():
    from action_state_cleanup._kafka_errors import may_be_stale

    assert may_be_stale(failure("describe", KafkaException(KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION))))
    assert may_be_stale(failure("describe", KafkaException(KafkaError(KafkaError._TRANSPORT))))
    assert not may_be_stale(failure("describe", KafkaException(KafkaError(KafkaError._INVALID_ARG))))
    assert not may_be_stale(failure("describe", RuntimeError("boom")))


def test_unlisted_codes_and_non_kafka_exceptions_are_other_or_timeout():
    assert failure("describe", KafkaException(KafkaError(KafkaError.UNKNOWN))).case == "other"
    assert failure("describe", KafkaException(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS))).case == "other"
    assert failure("describe", TimeoutError("slow")).case == "timeout"
    other = failure("describe", RuntimeError("boom"))
    assert (other.case, other.code, other.message) == ("other", 0, "RuntimeError: boom")


class Message:
    def __init__(self, offset: int, error: Optional[KafkaError] = None, key=b"k", value=b"v", at: Optional[int] = None) -> None:
        self._offset, self._error, self._key, self._value, self._at = offset, error, key, value, at

    def error(self):
        return self._error

    def partition(self):
        return 0

    def offset(self):
        return self._offset

    def key(self):
        return self._key

    def value(self):
        return self._value

    def timestamp(self):
        # confluent_kafka's (type, milliseconds); a record without one reads (NOT_AVAILABLE, -1).
        return (TIMESTAMP_NOT_AVAILABLE, -1) if self._at is None else (TIMESTAMP_CREATE_TIME, self._at)


class ScriptedConsumer:
    def __init__(self, messages) -> None:
        self.messages = list(messages)

    def consume(self, count, _timeout):
        taken, self.messages = self.messages[:count], self.messages[count:]
        self.delivered = max([m.offset() + 1 for m in taken if m.error() is None], default=getattr(self, "delivered", 0))
        return taken

    def assignment(self):
        return []

    def position(self, _partitions):
        # Like the client: everything consume() returned counts as delivered.
        return [TopicPartition("t", 0, getattr(self, "delivered", 0))]

    def close(self):
        pass


def scripted(messages) -> ReplayConsumer:
    consumer = ReplayConsumer({"bootstrap.servers": "127.0.0.1:9", "group.id": "g"}, "t")
    consumer._consumer.close()
    consumer._consumer = ScriptedConsumer(messages)
    return consumer


def test_a_consumer_error_after_records_is_returned_by_the_next_poll():
    transport = KafkaError(KafkaError._TRANSPORT)
    consumer = scripted([Message(0), Message(1), Message(-1, transport), Message(2)])
    # The records delivered before the error are returned and held, not dropped with it.
    assert [r.offset for r in consumer.poll(10, 100)] == [0, 1]
    assert [r.offset for r in consumer.last] == [0, 1]
    # The client counts record 2 as delivered; the component has not seen it yet.
    assert consumer.position() == [(0, 2)]
    with pytest.raises(CapabilityError) as failed:
        consumer.poll(10, 100)
    assert failed.value.case == "transport" and consumer.last == []


def test_a_consumer_error_before_any_record_fails_the_poll_at_once():
    consumer = scripted([Message(-1, KafkaError(KafkaError._AUTO_OFFSET_RESET)), Message(5)])
    with pytest.raises(CapabilityError) as failed:
        consumer.poll(10, 100)
    assert failed.value.case == "offset-out-of-range"
    assert [r.offset for r in consumer.poll(10, 100)] == [5]


def test_polled_records_say_what_they_hold_and_keep_the_texts():
    consumer = scripted([Message(0, key=None), Message(1, value=None), Message(2, value=b"ok\xff"), Message(3, key=b"", value=b"")])
    rows = consumer.poll(10, 100)
    assert [(r.has_key, r.has_value, r.utf8, r.key, r.value) for r in rows] == [
        (False, True, True, None, "v"),
        (True, False, True, "k", None),
        (True, True, False, None, None),
        (True, True, True, "", ""),
    ]


def test_a_poll_crosses_as_columns_with_the_wit_flag_bits_and_texts_and_times_only_with_data():
    consumer = scripted([Message(0, key=None, at=1_764_000_000_000), Message(1, value=None), Message(2, value=b"ok\xff"),
                         Message(3, key=b"", value=b"", at=1_764_000_000_007)])
    rows = consumer.poll(10, 100)
    bare = polled_batch(rows, with_data=False)
    assert (bare.partitions, bare.offsets, bare.flags, bare.keys, bare.values, bare.timestamps) == (
        [0, 0, 0, 0], [0, 1, 2, 3], bytes([6, 5, 3, 7]), [], [], [])
    full = polled_batch(rows, with_data=True)
    assert full.flags == bare.flags
    assert (full.keys, full.values) == ([None, "k", None, ""], ["v", None, None, ""])
    # Milliseconds since the epoch; -1 for a record without a timestamp, as the WIT says.
    assert full.timestamps == [1_764_000_000_000, -1, -1, 1_764_000_000_007]


class ScriptedProducer:
    """A transactional producer whose delivery fails with `delivery` and whose abort raises
    `abort` (a fenced producer purges what it queued, and its abort raises the fencing error)."""

    def __init__(self, delivery: Optional[int], abort: Optional[int]) -> None:
        self.delivery, self.abort = delivery, abort
        self.calls = []
        self.callback = None

    def begin_transaction(self):
        self.calls.append("begin")

    def produce(self, topic, value, key, partition, on_delivery):
        self.calls.append("produce")
        self.callback = on_delivery

    def flush(self, _timeout):
        error = None if self.delivery is None else KafkaError(self.delivery)
        self.callback(error, None if error else type("M", (), {"offset": lambda _self: 41})())
        return 0

    def commit_transaction(self, _timeout):
        self.calls.append("commit")

    def abort_transaction(self, _timeout):
        self.calls.append("abort")
        if self.abort is not None:
            raise KafkaException(KafkaError(self.abort, fatal=True))

    def purge(self):
        pass


def scripted_writer(producer: ScriptedProducer) -> Writer:
    writer = Writer.__new__(Writer)  # no real producer, no init_transactions
    writer.transactional, writer.timeout, writer._producer = True, 1.0, producer
    return writer


def test_a_transactional_append_is_its_own_committed_transaction():
    producer = ScriptedProducer(None, None)
    assert scripted_writer(producer).append("c", 0, "k", "v") == 41
    assert producer.calls == ["begin", "produce", "commit"]


def test_a_purged_append_of_a_fenced_writer_is_fenced():
    producer = ScriptedProducer(KafkaError._PURGE_QUEUE, KafkaError._FENCED)
    with pytest.raises(AppendFenced) as fenced:
        scripted_writer(producer).append("c", 0, "k", "v")
    assert fenced.value.case == "fenced" and producer.calls[-1] == "abort"


def test_other_append_failures_abort_and_keep_their_own_case():
    producer = ScriptedProducer(KafkaError._MSG_TIMED_OUT, None)
    with pytest.raises(CapabilityError) as failed:
        scripted_writer(producer).append("c", 0, "k", "v")
    assert failed.value.case == "timeout" and producer.calls[-1] == "abort"


def test_the_transactional_id_is_the_one_every_host_uses():
    assert transactional_id("jobs-cleanup") == "action-state-cleanup:jobs-cleanup"


def test_a_kafka_client_that_cannot_be_configured_is_an_other_kafka_error():
    kafka = KafkaCapabilities({"bootstrap.servers": "127.0.0.1:9", "no.such.property": "1"})
    with pytest.raises(CapabilityError) as failed:
        kafka.list_offsets("t", [0], latest=True)
    assert failed.value.case == "other"

"""Capability behaviour that needs failures on demand, against scripted confluent-kafka clients:
`list-offsets` retries the retriable codes until the timeout and reports anything else at once
(like `KafkaClients::list_offsets` of the Rust host); a consumer error in the middle of a poll
does not lose the records taken before it."""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import List, Optional

import pytest
from confluent_kafka import KafkaError, KafkaException

from action_state_cleanup import CapabilityError, KafkaCapabilities, ReplayConsumer


class Offset:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class ScriptedAdmin:
    """Answers list_offsets from a script: per attempt, an error code for every partition or
    None for success (offset 7 + partition)."""

    def __init__(self, script: List[Optional[int]]) -> None:
        self.script = list(script)
        self.attempts = 0

    def list_offsets(self, request, **_options):
        self.attempts += 1
        code = self.script.pop(0) if self.script else None
        futures = {}
        for tp in request:
            future: Future = Future()
            if code is None:
                future.set_result(Offset(7 + tp.partition))
            else:
                future.set_exception(KafkaException(KafkaError(code)))
            futures[tp] = future
        return futures


def capabilities(script: List[Optional[int]], timeout: float = 5.0):
    kafka = KafkaCapabilities({"bootstrap.servers": "127.0.0.1:9"}, timeout=timeout)
    admin = ScriptedAdmin(script)
    kafka._admin = admin  # the client list_offsets would otherwise create
    return kafka, admin


@pytest.mark.parametrize(
    "code", [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.REQUEST_TIMED_OUT, KafkaError._TRANSPORT]
)
def test_retriable_errors_are_asked_again_until_the_answer_comes(code: int):
    kafka, admin = capabilities([code, code, None])
    assert kafka.list_offsets("t", [0, 1], latest=True) == [(0, 7), (1, 8)]
    assert admin.attempts == 3
    assert kafka.counts.admin == 3  # every attempt is one admin request


def test_other_errors_are_reported_at_once():
    kafka, admin = capabilities([KafkaError.TOPIC_AUTHORIZATION_FAILED, None])
    started = time.monotonic()
    with pytest.raises(CapabilityError) as failed:
        kafka.list_offsets("t", [0], latest=False)
    assert admin.attempts == 1 and time.monotonic() - started < 1
    error = failed.value
    assert error.operation == "list-offsets" and not error.retriable
    assert error.message.startswith("partition 0: TOPIC_AUTHORIZATION_FAILED")


def test_a_retriable_error_that_persists_is_reported_after_the_timeout():
    kafka, admin = capabilities([KafkaError.NOT_LEADER_FOR_PARTITION] * 1000, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(CapabilityError) as failed:
        kafka.list_offsets("t", [3], latest=True)
    elapsed = time.monotonic() - started
    assert 1.0 <= elapsed < 3.0, elapsed
    assert admin.attempts > 3
    assert failed.value.retriable and "NOT_LEADER_FOR_PARTITION" in failed.value.message


class Message:
    def __init__(self, offset: int, error: Optional[KafkaError] = None) -> None:
        self._offset, self._error = offset, error

    def error(self):
        return self._error

    def partition(self):
        return 0

    def offset(self):
        return self._offset

    def key(self):
        return b"k%d" % self._offset

    def value(self):
        return b"v"


class ScriptedConsumer:
    def __init__(self, messages) -> None:
        self.messages = list(messages)

    def poll(self, _timeout):
        return self.messages.pop(0) if self.messages else None

    def close(self):
        pass


def scripted_replay(messages) -> ReplayConsumer:
    replay = ReplayConsumer({"bootstrap.servers": "127.0.0.1:9"}, "t")
    replay._consumer.close()
    replay._consumer = ScriptedConsumer(messages)
    return replay


def test_a_consumer_error_after_records_is_reported_by_the_next_poll():
    transport = KafkaError(KafkaError._TRANSPORT)
    replay = scripted_replay([Message(0), Message(1), Message(-1, transport), Message(2)])
    # The two records the consumer already delivered are returned, not dropped with the error.
    assert [r.offset for r in replay.poll(10, 100)] == [0, 1]
    with pytest.raises(CapabilityError) as failed:
        replay.poll(10, 100)
    assert failed.value.operation == "consumer-poll" and failed.value.retriable
    assert [r.offset for r in replay.poll(10, 100)] == [2]


def test_a_consumer_error_before_any_record_fails_the_poll_at_once():
    replay = scripted_replay([Message(-1, KafkaError(KafkaError._TRANSPORT)), Message(0)])
    with pytest.raises(CapabilityError):
        replay.poll(10, 100)
    assert [r.offset for r in replay.poll(10, 100)] == [0]

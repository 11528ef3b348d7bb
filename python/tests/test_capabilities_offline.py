"""Capability behaviour that needs failures on demand, against scripted confluent-kafka clients:
`list-offsets` retries the retriable codes until the timeout and reports anything else at once
(like `KafkaClients::list_offsets` of the Rust host); a consumer error in the middle of a poll
does not lose the records taken before it; the fenced control-topic writer tells a fenced
transaction (`append-error.fenced`) from any other failure (like host/src/kafka/fence.rs)."""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import List, Optional

import pytest
from confluent_kafka import KafkaError, KafkaException

from action_state_cleanup import AppendFenced, CapabilityError, FencedWriter, KafkaCapabilities, ReplayConsumer, transactional_id


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


# --- the fenced control-topic writer ---------------------------------------------------------------


class Delivered:
    def __init__(self, offset: int) -> None:
        self._offset = offset

    def offset(self):
        return self._offset


class ScriptedProducer:
    """A transactional producer whose calls follow a script: `fail` maps a call name
    (begin_transaction, produce, commit_transaction, abort_transaction) to the KafkaError it
    raises; `delivery` is the delivery report's error (None: delivered at offset 41)."""

    def __init__(self, fail=None, delivery: Optional[KafkaError] = None) -> None:
        self.fail = dict(fail or {})
        self.delivery = delivery
        self.calls: List[str] = []
        self._pending = None

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise KafkaException(self.fail[name])

    def begin_transaction(self):
        self._call("begin_transaction")

    def produce(self, topic, value=None, key=None, partition=None, on_delivery=None):
        self._call("produce")
        self._pending = on_delivery

    def poll(self, _timeout=None):
        if self._pending is not None:
            callback, self._pending = self._pending, None
            callback(self.delivery, None if self.delivery is not None else Delivered(41))
        return 0

    def commit_transaction(self, _timeout=None):
        self._call("commit_transaction")

    def abort_transaction(self, _timeout=None):
        self._call("abort_transaction")

    def purge(self, *args, **kwargs):
        pass

    def flush(self, *_args):
        return 0


def scripted_writer(producer: ScriptedProducer, topic: str = "jobs-cleanup") -> FencedWriter:
    writer = FencedWriter.__new__(FencedWriter)  # no real producer, no init_transactions
    writer.topic, writer.timeout, writer._fatal, writer._producer = topic, 1.0, None, producer
    return writer


FENCED = KafkaError(KafkaError._FENCED, "This instance has been fenced by a newer instance", fatal=True)


def test_the_transactional_id_is_the_one_every_host_uses():
    assert transactional_id("jobs-cleanup") == "action-state-cleanup:jobs-cleanup"


def test_a_fenced_append_commits_its_own_transaction():
    producer = ScriptedProducer()
    assert scripted_writer(producer).append("plan", "{}") == 41
    assert producer.calls == ["begin_transaction", "produce", "commit_transaction"]


def test_a_send_purged_because_the_producer_was_fenced_is_fenced():
    # A fenced transactional producer purges its queue: the delivery reports only the purge,
    # and the abort that follows raises the fatal error that explains it.
    producer = ScriptedProducer(fail={"abort_transaction": FENCED}, delivery=KafkaError(KafkaError._PURGE_QUEUE))
    with pytest.raises(AppendFenced) as fenced:
        scripted_writer(producer).append("plan", "{}")
    assert producer.calls == ["begin_transaction", "produce", "abort_transaction"]
    assert fenced.value.reason.startswith("_FENCED: ")


def test_a_fatal_error_reported_by_the_error_callback_explains_a_purge():
    producer = ScriptedProducer(delivery=KafkaError(KafkaError._PURGE_INFLIGHT))
    writer = scripted_writer(producer)
    writer._on_error(KafkaError(KafkaError.PRODUCER_FENCED, "fenced by a newer producer", fatal=True))
    with pytest.raises(AppendFenced) as fenced:
        writer.append("plan", "{}")
    assert "PRODUCER_FENCED" in fenced.value.reason


@pytest.mark.parametrize("call", ["begin_transaction", "produce", "commit_transaction"])
@pytest.mark.parametrize("code", [KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH, KafkaError.INVALID_TXN_STATE])
def test_fencing_errors_of_any_transactional_call_are_fenced(call: str, code: int):
    producer = ScriptedProducer(fail={call: KafkaError(code)})
    with pytest.raises(AppendFenced):
        scripted_writer(producer).append("plan", "{}")
    # A transaction that was begun is aborted; begin itself failing leaves nothing to abort.
    assert ("abort_transaction" in producer.calls) == (call != "begin_transaction")


def test_other_failures_abort_and_are_kafka_errors_that_are_not_retriable():
    producer = ScriptedProducer(delivery=KafkaError(KafkaError._MSG_TIMED_OUT))
    with pytest.raises(CapabilityError) as failed:
        scripted_writer(producer).append("plan", "{}")
    assert producer.calls[-1] == "abort_transaction"
    assert failed.value.operation == "append-control" and not failed.value.retriable
    assert "_MSG_TIMED_OUT" in failed.value.message
    assert not isinstance(failed.value, AppendFenced)


def test_a_fenced_append_without_a_fence_of_that_topic_is_fenced():
    kafka = KafkaCapabilities({"bootstrap.servers": "127.0.0.1:9"}, timeout=1.0)
    with pytest.raises(AppendFenced) as fenced:
        kafka.append_control("jobs-cleanup", "plan", "{}", fenced=True)
    assert fenced.value.reason == "this host did not fence control topic jobs-cleanup"
    kafka._writer = scripted_writer(ScriptedProducer(), topic="other-cleanup")
    with pytest.raises(AppendFenced, match="did not fence control topic jobs-cleanup"):
        kafka.append_control("jobs-cleanup", "plan", "{}", fenced=True)
    assert kafka._writer._producer.calls == []  # the other topic's writer was not used

"""What the component makes of a fenced commit and of a failed append, from Python against a real
broker. The writer capability itself (fencing of an older writer, visibility after append) is
checked by the conformance suite (test_conformance.py)."""

from __future__ import annotations

import json
import time
from typing import Callable, List

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from action_state_cleanup import Cleanup, Fenced, KafkaFailure, TopicChanged
from action_state_cleanup._kafka_config import transactional_id
from action_state_cleanup._kafka_errors import CapabilityError

from conftest import beginning_offsets, create_topic, delete_topic, produce, unique

CONTROL_CONFIG = {"cleanup.policy": "compact"}


@pytest.fixture
def control(admin: AdminClient) -> str:
    topic = unique("fence-control")
    create_topic(admin, topic, partitions=1, config=CONTROL_CONFIG)
    return topic


def committed_records(bootstrap: str, topic: str) -> List[tuple]:
    """Partition 0 of `topic` as an independent read_committed consumer sees it right now."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("check"),
            "isolation.level": "read_committed",
            "enable.auto.commit": "false",
            "enable.partition.eof": "true",
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        records = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                break  # end of partition (the last stable offset under read_committed)
            records.append((message.offset(), message.key().decode(), message.value().decode()))
        return records
    finally:
        consumer.close()


def transactional_producer(bootstrap: str, transactional: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional, "linger.ms": "0"})
    producer.init_transactions(30)
    return producer


# --- the component over these capabilities --------------------------------------------------------


@pytest.fixture
def story(bootstrap: str, admin: AdminClient):
    data = unique("fenced-apply")
    create_topic(admin, data, partitions=2)
    cleanup = Cleanup(bootstrap, f"{data}-cleanup")
    produce(cleanup, data, 0, 0, 100)
    produce(cleanup, data, 1, 0, 20)
    marker = cleanup.snapshot_marker(data)
    yield cleanup, data, cleanup.render(cleanup.plan("C1", [marker]))
    cleanup.close()


def before_each_append(cleanup: Cleanup, hook: Callable[[str], None]) -> Callable[[], None]:
    """Calls `hook(key)` right before each append of every writer the apply opens from now on
    (a hook that raises fails that append). Returns what undoes it."""
    kafka = cleanup.kafka
    real_open = kafka.open_writer

    def open_writer(transactional):
        writer = real_open(transactional)
        append = writer.append

        def hooked(topic, partition, key, value):
            hook(key)
            return append(topic, partition, key, value)

        writer.append = hooked
        return writer

    kafka.open_writer = open_writer  # type: ignore[method-assign]
    return lambda: setattr(kafka, "open_writer", real_open)


def fenced_before_appends(cleanup: Cleanup, bootstrap: str, times: int) -> List[str]:
    """Makes another apply fence the control topic right before each of this apply's next
    `times` appends: after its writer was opened (since issue 34 item 5 a missing control topic
    is created and fenced only after the operator's answer, so the answer's hook comes too
    early). Returns the list the fences are counted in."""
    fences: List[str] = []

    def fence(key: str) -> None:
        if len(fences) < times:
            fences.append(key)
            transactional_producer(bootstrap, transactional_id(cleanup.control_topic))

    before_each_append(cleanup, fence)
    return fences


def test_an_apply_fenced_at_commit_decides_again_and_commits(story, bootstrap: str, admin: AdminClient):
    cleanup, data, plan_json = story
    answers: List[str] = []
    cleanup.on_before_commit = lambda plan_id, _rows: answers.append(plan_id)
    fences = fenced_before_appends(cleanup, bootstrap, 1)
    report = cleanup.apply(plan_json)
    # The first commit was fenced; the component fenced again, re-read and committed, without
    # asking the operator a second time.
    assert report.outcome == "applied" and len(fences) == 1 and len(answers) == 1
    assert beginning_offsets(admin, data, [0, 1]) == {0: 100, 1: 20}
    statuses = [(json.loads(v)["status"], k) for _, k, v in committed_records(bootstrap, cleanup.control_topic)]
    assert statuses == [("COMMITTED", report.plan_id), ("APPLIED", report.plan_id)]


def test_an_apply_fenced_at_every_attempt_is_refused_with_fenced_and_commits_nothing(story, bootstrap: str, admin: AdminClient):
    cleanup, data, plan_json = story
    real_open = cleanup.kafka.open_writer
    # Another apply takes the writer before every commit this one attempts: it decides again a
    # bounded number of times (the core's MAX_ATTEMPTS), then refuses.
    fences = fenced_before_appends(cleanup, bootstrap, 1_000)
    with pytest.raises(Fenced) as fenced:
        cleanup.apply(plan_json)
    assert len(fences) >= 2
    assert fenced.value.kind == "fenced"
    # The component classes the stop; the plan comes with the failure (no further call).
    assert fenced.value.failure_class == "fenced"
    assert fenced.value.plan_id == cleanup.verify(plan_json).plan_id
    assert f"A concurrent apply took over control topic {cleanup.control_topic}" in fenced.value.message
    cleanup.kafka.open_writer = real_open
    assert cleanup.status().operations == []
    assert beginning_offsets(admin, data, [0, 1]) == {0: 0, 1: 0}
    # Nothing is left behind: the next apply commits normally.
    assert cleanup.apply(plan_json).outcome == "applied"


def test_an_append_failing_after_committed_is_a_kafka_failure_and_the_plan_resumes(story):
    cleanup, data, plan_json = story
    appends: List[str] = []

    def refused_after_commit(key: str) -> None:
        # The first append (COMMITTED) works; every later one is refused by the cluster.
        appends.append(key)
        if len(appends) > 1:
            raise CapabilityError("append", "denied (test)", "authorization", 29, "TOPIC_AUTHORIZATION_FAILED")

    undo = before_each_append(cleanup, refused_after_commit)
    with pytest.raises(KafkaFailure) as failed:
        cleanup.apply(plan_json)
    assert failed.value.status == "COMMITTED" and failed.value.retriable is False
    assert failed.value.failure_class == "failed"
    assert failed.value.cause == {"tag": "authorization", "payload": {"code": 29, "name": "TOPIC_AUTHORIZATION_FAILED", "message": "denied (test)"}}
    assert [op.status for op in cleanup.status().operations] == ["COMMITTED"]
    undo()
    assert cleanup.apply(plan_json).outcome == "resumed"


def test_an_apply_for_a_missing_data_topic_sees_it_missing(story, admin: AdminClient):
    cleanup, data, plan_json = story
    delete_topic(admin, data)
    with pytest.raises(TopicChanged) as changed:
        cleanup.apply(plan_json)
    assert changed.value.found_topic_id == "" and changed.value.found_partitions == []
    assert changed.value.failure_class == "refused" and not changed.value.commit_attempted

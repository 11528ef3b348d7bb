"""The fenced control-topic writer and the one-round-trip admin capabilities against a real
broker: `control-log.fence` and the fenced `append` (host/src/kafka/fence.rs), the read that ends
at the last stable offset, `kafka-admin.inspect-topics` and `kafka-admin.offset-range`, and what
the component makes of a fenced commit."""

from __future__ import annotations

import json
import time
from typing import Dict, List

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from action_state_cleanup import (
    AppendFenced,
    CapabilityError,
    Cleanup,
    Fenced,
    KafkaCapabilities,
    KafkaFailure,
    TopicChanged,
    transactional_id,
)

from conftest import beginning_offsets, create_topic, delete_topic, produce, unique

CONTROL_CONFIG = {"cleanup.policy": "compact"}


@pytest.fixture
def control(admin: AdminClient) -> str:
    topic = unique("fence-control")
    create_topic(admin, topic, partitions=1, config=CONTROL_CONFIG)
    return topic


def clients(bootstrap: str) -> KafkaCapabilities:
    return KafkaCapabilities({"bootstrap.servers": bootstrap}, timeout=30)


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


# --- capabilities -----------------------------------------------------------------------------


def test_a_fenced_append_is_visible_to_read_committed_readers_when_it_returns(bootstrap: str, control: str):
    kafka = clients(bootstrap)
    with pytest.raises(AppendFenced, match=f"this host did not fence control topic {control}"):
        kafka.append_control(control, "p1", "v1", fenced=True)
    before = kafka.counts
    kafka.fence_control(control)
    assert kafka.counts.admin == before.admin + 1
    assert kafka.append_control(control, "p1", "v1", fenced=True) == 0
    # Visible at once to any read_committed reader, with no wait on the reader's side.
    assert committed_records(bootstrap, control) == [(0, "p1", "v1")]
    assert kafka.read_control_log(control) == [(0, "p1", "v1")]
    # Each fenced append is its own transaction: its commit marker takes the next offset.
    assert kafka.append_control(control, "p2", "v2", fenced=True) == 2
    assert kafka.list_offsets(control, [0], latest=True) == [(0, 4)]
    # Unfenced appends (APPLIED records) go through the idempotent producer, marker-free.
    assert kafka.append_control(control, "p3", "v3") == 4
    assert kafka.read_control_log(control) == [(0, "p1", "v1"), (2, "p2", "v2"), (4, "p3", "v3")]
    assert kafka.counts.control_writes == before.control_writes + 3
    kafka.close()


def test_a_later_fence_from_any_writer_fences_the_earlier_one(bootstrap: str, control: str):
    first, second = clients(bootstrap), clients(bootstrap)
    first.fence_control(control)
    assert first.append_control(control, "a", "1", fenced=True) == 0

    second.fence_control(control)
    with pytest.raises(AppendFenced) as fenced:
        first.append_control(control, "b", "2", fenced=True)
    assert "FENCED" in fenced.value.reason.upper() or "EPOCH" in fenced.value.reason.upper()
    # The fenced record was never committed: readers do not see it.
    assert second.read_control_log(control) == [(0, "a", "1")]
    offset = second.append_control(control, "c", "3", fenced=True)
    # The fenced writer stays fenced; an unfenced append (APPLIED) still works.
    with pytest.raises(AppendFenced):
        first.append_control(control, "d", "4", fenced=True)
    first.append_control(control, "e", "5")
    assert [(k, v) for _, k, v in second.read_control_log(control)] == [("a", "1"), ("c", "3"), ("e", "5")]
    assert offset > 0

    # Fencing again takes the topic back: the writer of a new fence is the only one.
    first.fence_control(control)
    first.append_control(control, "f", "6", fenced=True)
    with pytest.raises(AppendFenced):
        second.append_control(control, "g", "7", fenced=True)

    # The transactional id is the one every host derives from the control topic: a plain
    # transactional producer with it (as the Rust host creates) fences this host's writer.
    assert transactional_id(control) == f"action-state-cleanup:{control}"
    outsider = transactional_producer(bootstrap, transactional_id(control))
    with pytest.raises(AppendFenced):
        first.append_control(control, "h", "8", fenced=True)
    outsider.flush(5)
    # A fence per control topic: fencing another topic replaces the writer.
    other = unique("fence-other")
    create_topic(AdminClient({"bootstrap.servers": bootstrap}), other, partitions=1, config=CONTROL_CONFIG)
    first.fence_control(other)
    with pytest.raises(AppendFenced, match=f"did not fence control topic {control}"):
        first.append_control(control, "i", "9", fenced=True)
    assert first.append_control(other, "j", "10", fenced=True) == 0
    first.close()
    second.close()


def test_the_control_read_ends_at_the_last_stable_offset(bootstrap: str, control: str):
    kafka = clients(bootstrap)
    kafka.append_control(control, "a", "1")
    # Another writer's open transaction: the read does not wait for it and does not see it.
    open_txn = transactional_producer(bootstrap, unique("other-writer"))
    open_txn.begin_transaction()
    open_txn.produce(control, key="pending", value="x", partition=0)
    open_txn.flush(10)
    kafka.append_control(control, "b", "2")  # after the open transaction's record
    started = time.monotonic()
    assert kafka.read_control_log(control) == [(0, "a", "1")]
    assert time.monotonic() - started < 10
    ((_, beginning, end),) = kafka.offset_range(control, [0])
    assert (beginning, end) == (0, 1)  # the last stable offset, not the high watermark (3)

    # Aborted: its record never appears, and the read moves past the abort marker.
    open_txn.abort_transaction(30)
    assert kafka.read_control_log(control) == [(0, "a", "1"), (2, "b", "2")]
    assert kafka.offset_range(control, [0]) == [(0, 0, 4)]

    committed = transactional_producer(bootstrap, unique("other-writer"))
    committed.begin_transaction()
    committed.produce(control, key="c", value="3", partition=0)
    committed.commit_transaction(30)
    deadline = time.monotonic() + 30
    while kafka.offset_range(control, [0])[0][2] < 6:  # the commit marker lands asynchronously
        assert time.monotonic() < deadline
        time.sleep(0.05)
    before = kafka.counts
    assert kafka.read_control_log(control)[-1] == (4, "c", "3")
    # The offset lookups belong to the read: one control read, no admin requests.
    assert kafka.counts.control_reads == before.control_reads + 1 and kafka.counts.admin == before.admin
    kafka.close()


def test_inspect_topics_answers_existing_and_missing_topics_in_one_request(bootstrap: str, admin: AdminClient):
    kafka = clients(bootstrap)
    topic, missing = unique("inspect"), unique("missing")
    create_topic(admin, topic, partitions=3)
    names = ["cleanup.policy", "retention.ms", "retention.bytes", "no.such.config"]
    before = kafka.counts.admin
    existing, absent = kafka.inspect_topics([topic, missing], names)
    assert kafka.counts.admin == before + 1
    assert absent is None
    description, configs = existing
    assert description == kafka.describe_topics([topic])[0]
    assert description.partitions == [0, 1, 2] and len(description.topic_id) == 22
    assert configs == [("cleanup.policy", "compact,delete"), ("retention.ms", "-1"), ("retention.bytes", "-1"), ("no.such.config", None)]
    assert configs == kafka.describe_configs([topic], names)[0]
    # Order follows the request, duplicates included; only missing topics is all None.
    assert [s is None for s in kafka.inspect_topics([missing, topic, missing], names)] == [True, False, True]
    assert kafka.inspect_topics([missing], names) == [None]
    assert kafka.inspect_topics([], names) == []
    kafka.close()


def test_offset_range_lists_both_ends_in_one_request(bootstrap: str, admin: AdminClient):
    kafka = clients(bootstrap)
    topic = unique("range")
    create_topic(admin, topic, partitions=3)
    kafka.produce_batch(topic, [(1, f"k{i}", f"v{i}") for i in range(10)])
    kafka.delete_records(topic, [(1, 4)])
    before = kafka.counts.admin
    assert kafka.offset_range(topic, [0, 1, 2]) == [(0, 0, 0), (1, 4, 10), (2, 0, 0)]
    assert kafka.counts.admin == before + 1
    assert kafka.offset_range(topic, [2, 1]) == [(2, 0, 0), (1, 4, 10)]
    assert kafka.offset_range(topic, []) == []
    with pytest.raises(CapabilityError) as failed:
        kafka.offset_range(unique("missing"), [0])
    assert failed.value.operation == "offset-range" and failed.value.message.startswith("partition 0: ")
    kafka.close()


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


def test_an_apply_fenced_at_commit_decides_again_and_commits(story, bootstrap: str, admin: AdminClient):
    cleanup, data, plan_json = story
    other = clients(bootstrap)
    calls: List[str] = []

    def concurrent_fence(plan_id, _rows):
        # Another apply fences the control topic after this one read it, and commits nothing.
        if not calls:
            other.fence_control(cleanup.control_topic)
        calls.append(plan_id)

    cleanup.on_before_commit = concurrent_fence
    report = cleanup.apply(plan_json)
    # The first commit was fenced; the component fenced again, re-read and committed.
    assert report.outcome == "applied" and len(calls) == 2
    assert beginning_offsets(admin, data, [0, 1]) == {0: 100, 1: 20}
    statuses = [(json.loads(v)["status"], k) for _, k, v in other.read_control_log(cleanup.control_topic)]
    assert statuses == [("COMMITTED", report.plan_id), ("APPLIED", report.plan_id)]
    other.close()


def test_an_apply_fenced_twice_is_refused_with_fenced_and_commits_nothing(story, bootstrap: str, admin: AdminClient):
    cleanup, data, plan_json = story
    other = clients(bootstrap)
    cleanup.on_before_commit = lambda _plan_id, _rows: other.fence_control(cleanup.control_topic)
    with pytest.raises(Fenced) as fenced:
        cleanup.apply(plan_json)
    assert fenced.value.kind == "fenced"
    assert f"A concurrent apply took over control topic {cleanup.control_topic}" in fenced.value.message
    cleanup.on_before_commit = None
    assert cleanup.status().operations == []
    assert beginning_offsets(admin, data, [0, 1]) == {0: 0, 1: 0}
    # Nothing is left behind: the next apply commits normally.
    assert cleanup.apply(plan_json).outcome == "applied"
    other.close()


def test_a_failed_unfenced_append_is_a_kafka_failure_and_the_plan_resumes(story):
    cleanup, data, plan_json = story
    kafka = cleanup.kafka
    real_append = kafka.append_control

    def applied_append_fails(topic, key, value, fenced=False):
        if not fenced:
            raise CapabilityError("append-control", "broker unavailable (test)", True)
        return real_append(topic, key, value, fenced)

    kafka.append_control = applied_append_fails  # type: ignore[method-assign]
    with pytest.raises(KafkaFailure) as failed:
        cleanup.apply(plan_json)
    assert (failed.value.operation, failed.value.retriable) == ("append-control", True)
    assert "broker unavailable (test)" in failed.value.kafka_message
    assert [op.status for op in cleanup.status().operations] == ["COMMITTED"]
    kafka.append_control = real_append  # type: ignore[method-assign]
    assert cleanup.apply(plan_json).outcome == "resumed"


def test_an_apply_for_a_missing_data_topic_sees_it_missing(story, admin: AdminClient):
    cleanup, data, plan_json = story
    delete_topic(admin, data)
    with pytest.raises(TopicChanged) as changed:
        cleanup.apply(plan_json)
    assert changed.value.found_topic_id == "" and changed.value.found_partitions == []

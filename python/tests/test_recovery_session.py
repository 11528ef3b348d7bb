"""The recovery-session resource from Python against a real broker: restore, replay in batches,
checkpoint markers during and after a replay, and the refusals a runtime must see (boundary,
recreated topic, changed partitions, undecodable records, stalls), and what a failed restore leaves
behind."""

from __future__ import annotations

import gc
import json
import time
from typing import Dict, List, Optional, Tuple

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions

from action_state_cleanup import (
    BoundaryViolation,
    Cleanup,
    CleanupError,
    ConflictingPolicies,
    InternalError,
    InvalidArgument,
    InvalidMarker,
    PartitionProgress,
    RecoverySession,
    ReplayedRecord,
    ReplayRecordInvalid,
    ReplayStalled,
    RecoveryRefused,
    TopicChanged,
    _kafka_consumer,
)

from conftest import beginning_offsets, create_topic, delete_topic, send, unique

Row = Tuple[int, int, str, Optional[str]]


def plain_read(bootstrap: str, topic: str, start: Dict[int, int]) -> List[Row]:
    """Every record of [start, end) per partition, read with a plain confluent-kafka consumer
    (no component, no package code): (partition, offset, key, value); value None = tombstone."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("plain-reader"),
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
            "isolation.level": "read_committed",
        }
    )
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in start}
        pending = {p: o for p, o in start.items() if o < ends[p]}
        consumer.assign([TopicPartition(topic, p, o) for p, o in pending.items()])
        rows: List[Row] = []
        deadline = time.monotonic() + 120
        while pending:
            assert time.monotonic() < deadline, f"plain read stuck at {pending} of {ends}"
            for message in consumer.consume(1000, 1.0):
                assert message.error() is None, message.error()
                p, offset = message.partition(), message.offset()
                if offset >= ends[p]:
                    continue
                value = message.value()
                rows.append((p, offset, message.key().decode(), None if value is None else value.decode()))
                if offset + 1 >= ends[p]:
                    pending.pop(p, None)
        return rows
    finally:
        consumer.close()


def end_offsets(bootstrap: str, topic: str, partitions: List[int]) -> Dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("ends")})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in partitions}
    finally:
        consumer.close()


def rows(records) -> List[Row]:
    return [(r.partition, r.offset, r.key, r.value) for r in records]


def by_partition(items: List[Row], partition: int) -> List[Row]:
    return [r for r in items if r[0] == partition]


def offsets_of(marker: str) -> Dict[str, int]:
    return json.loads(marker)["offsets"]


def with_offsets(marker: str, offsets: Dict[int, int]) -> str:
    document = json.loads(marker)
    document["offsets"] = {str(p): o for p, o in offsets.items()}
    return json.dumps(document, separators=(",", ":"))


class Scene:
    """Two partitions. C0 at {0: 100, 1: 40}, C1 at {0: 150, 1: 60}; after C1 partition 0 gets
    30 more records and partition 1 ten, both with updates of earlier keys and tombstones."""

    def __init__(self, bootstrap: str, admin: AdminClient) -> None:
        self.bootstrap = bootstrap
        self.admin = admin
        self.topic = unique("session")
        self.control = f"{self.topic}-cleanup"
        create_topic(admin, self.topic, partitions=2)
        self.cleanup = Cleanup(bootstrap, self.control)
        def write(topic, rows):
            send(bootstrap, topic, rows)

        write(self.topic, [(0, f"p0-{i % 60}", f"state-{i}") for i in range(100)])
        write(self.topic, [(1, f"p1-{i % 25}", f"state-{i}") for i in range(40)])
        self.c0 = self.cleanup.snapshot_marker(self.topic)
        write(self.topic, [(0, f"p0-{i % 60}", f"state-{i}") for i in range(100, 150)])
        write(self.topic, [(1, f"p1-{i % 25}", f"state-{i}") for i in range(40, 60)])
        self.c1 = self.cleanup.snapshot_marker(self.topic)
        # Written after C1, in offset order: every 4th record of p0 and every 3rd of p1 is a
        # tombstone of a key written before C1.
        self.after_c1: List[Row] = []
        for n in range(30):
            self.after_c1.append((0, 150 + n, f"p0-{n * 2}", None if n % 4 == 0 else f"after-{n}"))
        for n in range(10):
            self.after_c1.append((1, 60 + n, f"p1-{n}", None if n % 3 == 0 else f"after-{n}"))
        write(self.topic, [(p, key, value) for p, _, key, value in self.after_c1])

    def close(self) -> None:
        self.cleanup.close()


@pytest.fixture
def scene(bootstrap: str, admin: AdminClient):
    scene = Scene(bootstrap, admin)
    assert offsets_of(scene.c0) == {"0": 100, "1": 40} and offsets_of(scene.c1) == {"0": 150, "1": 60}
    yield scene
    scene.close()


def apply_from(cleanup: Cleanup, recovery_point: str, marker: str):
    report = cleanup.apply(cleanup.render(cleanup.plan(recovery_point, [marker])))
    assert report.outcome == "applied" and report.status == "APPLIED"
    return report


# --- replay equals an independent read ---------------------------------------------------------


def test_restore_from_c1_replays_exactly_what_a_plain_consumer_reads(scene: Scene):
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        verdict = session.restore([scene.c1], poll_timeout_ms=200, stall_timeout_ms=20_000)
        assert verdict.topic == scene.topic and verdict.versioned and verdict.boundary is None
        assert [(r.partition, r.requested, r.beginning, r.end) for r in verdict.ranges] == [(0, 150, 0, 180), (1, 60, 0, 70)]

        batches = list(session.replay(max_records=7))
        assert all(1 <= len(batch) <= 7 for batch in batches)
        assert len(batches) >= 6  # 40 records, at most 7 per guest call
        assert all(isinstance(r, ReplayedRecord) for batch in batches for r in batch)
        replayed = rows(r for batch in batches for r in batch)
        assert session.progress == [PartitionProgress(0, 180, 180), PartitionProgress(1, 70, 70)]

    independent = plain_read(scene.bootstrap, scene.topic, {0: 150, 1: 60})
    assert len(replayed) == len(independent) == 40
    for partition in (0, 1):
        # Same records in the same (offset) order per partition, tombstones included.
        assert by_partition(replayed, partition) == by_partition(independent, partition)
    assert sorted(replayed) == sorted(independent) == scene.after_c1
    tombstones = [r for r in replayed if r[3] is None]
    assert len(tombstones) == 8 + 4 and sorted(tombstones) == sorted(r for r in independent if r[3] is None)


def test_bulk_replay_over_four_partitions_equals_a_plain_consumer(bootstrap: str, admin: AdminClient, record_property):
    topic = unique("bulk")
    create_topic(admin, topic, partitions=4)
    cleanup = Cleanup(bootstrap)
    # Keys repeat (updates) within their partition, and some are tombstoned.
    records = [(n % 4, f"action-{n % 6000}", f'{{"step":{n}}}') for n in range(20_000)]
    records += [(k % 4, f"action-{k}", None) for k in range(0, 6000, 7)]
    send(bootstrap, topic, records)
    start = with_offsets(cleanup.snapshot_marker(topic), {p: 0 for p in range(4)})

    replayed: List[Row] = []
    with cleanup.recovery_session(topic) as session:
        session.restore([start])
        began = time.perf_counter()
        for record in session.records(max_records=5000):
            replayed.append((record.partition, record.offset, record.key, record.value))
        seconds = time.perf_counter() - began
    record_property("replay_records_per_second", round(len(replayed) / seconds))

    independent = plain_read(bootstrap, topic, {p: 0 for p in range(4)})
    assert len(replayed) == len(independent) == len(records)
    assert sorted(replayed) == sorted(independent)
    for partition in range(4):
        assert by_partition(replayed, partition) == by_partition(independent, partition)

    def state(rows_: List[Row]) -> Dict[str, str]:
        result: Dict[str, str] = {}
        for _, _, key, value in rows_:
            if value is None:
                result.pop(key, None)
            else:
                result[key] = value
        return result

    recovered = state(replayed)
    assert recovered == state(independent)
    assert "action-0" not in recovered and "action-1" in recovered
    cleanup.close()


# --- refusals at restore ---------------------------------------------------------------------


def test_restore_below_the_committed_boundary_raises_boundary_violation(scene: Scene):
    apply_from(scene.cleanup, "C1", scene.c1)
    with scene.cleanup.recovery_session(scene.topic) as session:  # enforces the Cleanup's control topic
        assert session.control_topic == scene.control
        with pytest.raises(BoundaryViolation) as refused:
            session.restore([scene.c0])
        error = refused.value
        assert (error.kind, error.topic, error.partition, error.requested, error.boundary) == (
            "boundary-violation", scene.topic, 0, 100, 150,
        )
        assert f"{scene.topic}-0" in error.message and "100" in error.message and "150" in error.message
        assert error.details == {"topic": scene.topic, "partition": 0, "requested": 100, "boundary": 150}

        # The refusal left the session usable: a restore at the boundary is allowed and replays.
        verdict = session.restore([scene.c1])
        assert verdict.enforced and verdict.boundary == {0: 150, 1: 60}
        assert sorted(rows(session.records())) == scene.after_c1


def test_session_start_refuses_conflicting_policies_and_missing_topics(scene: Scene):
    with pytest.raises(ConflictingPolicies) as conflicting:
        scene.cleanup.recovery_session(scene.topic, tombstones=True)  # with the control topic
    assert conflicting.value.kind == "conflicting-policies"
    # Tombstones without a control topic are standard recovery.
    scene.cleanup.recovery_session(scene.topic, control_topic=None, tombstones=True).close()
    missing = unique("missing")
    with pytest.raises(InvalidArgument) as absent:
        scene.cleanup.recovery_session(missing)
    assert absent.value.kind == "invalid-argument" and missing in absent.value.message


# --- a failed restore ------------------------------------------------------------------------------


def not_utf8(marker: str) -> bytes:
    """The marker's bytes with a byte that is never UTF-8 (0xff) inside its topic name."""
    raw = marker.encode()
    at = raw.index(b'"topic":"') + len(b'"topic":"') + 2
    return raw[:at] + b"\xff" + raw[at:]


def test_a_restore_from_bytes_that_are_not_utf8_fails_closed_in_a_fresh_and_a_live_session(scene: Scene):
    """Undecodable marker bytes are a failed restore like any other (wit/recovery.wit): the
    runtime may already hold that checkpoint's state, so the session refuses checkpoints until a
    restore completes instead of snapshotting the live end offsets."""
    live = scene.cleanup.snapshot_marker(scene.topic)
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        with pytest.raises(CleanupError) as fresh:
            session.restore([scene.c1, not_utf8(scene.c1)])
        assert isinstance(fresh.value, InvalidMarker) and "marker 2" in fresh.value.message, fresh.value
        with pytest.raises(RecoveryRefused) as refused:
            session.snapshot_marker()
        assert f"The last restore of {scene.topic} failed" in refused.value.message

        # A completed restore with nothing to replay makes the session live again ...
        session.restore([live])
        assert offsets_of(session.snapshot_marker()) == {"0": 180, "1": 70}
        # ... and an undecodable restore of a live session fails closed just the same.
        with pytest.raises(InvalidMarker):
            session.restore([not_utf8(live)])
        with pytest.raises(RecoveryRefused):
            session.snapshot_marker()


def test_a_restore_from_bytes_that_are_not_utf8_ends_a_replay_without_keeping_its_offsets(scene: Scene):
    """A replaying session keeps its restored offsets after a failed restore only when that
    restore asked for exactly them; bytes that cannot be read ask for nothing known."""
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        session.restore([scene.c1], poll_timeout_ms=200, stall_timeout_ms=20_000)
        head = session.next_batch(10)
        assert not head.done and offsets_of(session.snapshot_marker()) == {"0": 150, "1": 60}

        with pytest.raises(CleanupError) as failed:
            session.restore([not_utf8(scene.c0)])
        assert isinstance(failed.value, InvalidMarker), failed.value
        with pytest.raises(RecoveryRefused):
            session.snapshot_marker()  # not C1's offsets: the runtime may hold C0's state now
        with pytest.raises(InvalidArgument, match="restore again"):
            session.next_batch()

        session.restore([scene.c1], poll_timeout_ms=200, stall_timeout_ms=20_000)
        assert sorted(rows(session.records())) == scene.after_c1


def test_a_restore_the_host_cannot_hand_over_fails_closed_too(scene: Scene):
    """Inputs that never reach the component as a restore (a marker that is neither text nor
    bytes, a timeout outside u32) still raise the caller's error, but only after the session
    took the component's failed-restore path: the runtime may have loaded that checkpoint."""
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        with pytest.raises(ValueError):
            session.restore([scene.c1], poll_timeout_ms=-1)
        with pytest.raises(RecoveryRefused):
            session.snapshot_marker()

        session.restore([scene.c1], poll_timeout_ms=200, stall_timeout_ms=20_000)
        assert offsets_of(session.snapshot_marker()) == {"0": 150, "1": 60}
        with pytest.raises(TypeError):
            session.restore([scene.c0, 42])
        with pytest.raises(RecoveryRefused):
            session.snapshot_marker()


# --- checkpoints during and after recovery ------------------------------------------------------


def test_checkpoint_taken_during_recovery_keeps_what_the_restore_needs(scene: Scene):
    cleanup = scene.cleanup
    live_ends = {"0": 180, "1": 70}
    assert offsets_of(cleanup.snapshot_marker(scene.topic)) == live_ends

    # Restore from C1 (standard recovery) and stop halfway through the replay.
    first = cleanup.recovery_session(scene.topic, control_topic=None)
    first.restore([scene.c1], poll_timeout_ms=200, stall_timeout_ms=20_000)
    head = first.next_batch(10)
    assert not head.done and 1 <= len(head) <= 10, "replay is under way"
    assert any(p.position < p.target for p in head.progress)
    mid = first.snapshot_marker()
    assert offsets_of(mid) == {"0": 150, "1": 60}, "C1's offsets, not the live end offsets"
    assert json.loads(mid)["topicId"] == json.loads(scene.c1)["topicId"]

    # Plan and apply from the mid-recovery checkpoint: the boundary is C1's offsets.
    report = apply_from(cleanup, "mid-recovery", mid)
    assert report.target == {0: 150, 1: 60}
    assert beginning_offsets(scene.admin, scene.topic, [0, 1]) == {0: 150, 1: 60}

    # A new session (the job restarted) restores from that checkpoint under enforcement:
    # every record written after C1 is still there and replayed.
    with cleanup.recovery_session(scene.topic) as again:
        verdict = again.restore([mid], poll_timeout_ms=200, stall_timeout_ms=20_000)
        assert verdict.enforced and verdict.boundary == {0: 150, 1: 60}
        assert [(r.partition, r.requested, r.beginning, r.end) for r in verdict.ranges] == [(0, 150, 150, 180), (1, 60, 60, 70)]
        replayed = rows(again.records(max_records=9))
        assert sorted(replayed) == scene.after_c1
        # After the replay, a checkpoint carries the live end offsets again.
        assert offsets_of(again.snapshot_marker()) == live_ends

    # The interrupted first session still checkpoints C1 until its own replay finishes.
    assert offsets_of(first.snapshot_marker()) == {"0": 150, "1": 60}
    rest = rows(first.records())
    assert sorted(rows(head) + rest) == scene.after_c1
    assert offsets_of(first.snapshot_marker()) == live_ends
    first.close()


def test_snapshot_after_the_replay_is_the_live_end_not_the_captured_target(scene: Scene):
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        assert offsets_of(session.snapshot_marker()) == {"0": 180, "1": 70}  # no restore yet: live
        session.restore([scene.c1])
        assert offsets_of(session.snapshot_marker()) == {"0": 150, "1": 60}
        assert len(list(session.records())) == 40
        # New actions arrive after the restore captured its end offsets.
        send(scene.bootstrap, scene.topic, [(1, f"late-{i}", "x") for i in range(5)])
        marker = session.snapshot_marker()
        assert offsets_of(marker) == {"0": 180, "1": 75}
        assert {int(p): o for p, o in offsets_of(marker).items()} == end_offsets(scene.bootstrap, scene.topic, [0, 1])


# --- topic identity -------------------------------------------------------------------------------


def test_recreated_topic_is_refused_with_topic_changed(scene: Scene):
    cleanup = scene.cleanup
    old_id = json.loads(scene.c1)["topicId"]
    running = cleanup.recovery_session(scene.topic, control_topic=None)

    delete_topic(scene.admin, scene.topic)
    create_topic(scene.admin, scene.topic, partitions=2)
    # Right after creation; list-offsets retries while leadership settles.
    new_id = json.loads(cleanup.snapshot_marker(scene.topic))["topicId"]
    assert new_id != old_id

    # A session started before the recreation: the topic changed while the job was running.
    with pytest.raises(TopicChanged) as during:
        running.restore([scene.c1])
    error = during.value
    assert (error.kind, error.topic, error.context) == ("topic-changed", scene.topic, "while the job was running")
    assert (error.expected_topic_id, error.found_topic_id) == (old_id, new_id)
    assert error.expected_partitions == error.found_partitions == [0, 1]
    assert "may have been recreated" in error.message
    with pytest.raises(TopicChanged):
        running.snapshot_marker()
    running.close()

    # A session started after it: the marker is of another physical topic.
    with cleanup.recovery_session(scene.topic, control_topic=None) as fresh:
        with pytest.raises(TopicChanged) as since:
            fresh.restore([scene.c1])
        assert since.value.context == "since the recovery marker was taken"
        assert (since.value.expected_topic_id, since.value.found_topic_id) == (old_id, new_id)


def test_partitions_added_while_the_job_runs_are_refused_with_topic_changed(scene: Scene):
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        session.snapshot_marker()
        scene.admin.create_partitions([NewPartitions(scene.topic, 3)])[scene.topic].result(timeout=30)
        deadline = time.monotonic() + 30
        while len(scene.admin.list_topics(scene.topic, timeout=10).topics[scene.topic].partitions) != 3:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        with pytest.raises(TopicChanged) as changed:
            session.snapshot_marker()
        error = changed.value
        assert (error.context, error.expected_partitions, error.found_partitions) == ("while the job was running", [0, 1], [0, 1, 2])
        assert error.expected_topic_id == error.found_topic_id
        assert "changed partitions (while the job was running): expected [0, 1] but found [0, 1, 2]" in error.message


# --- replay failures ----------------------------------------------------------------------------


def test_records_without_a_key_or_with_invalid_utf8_are_replay_record_invalid(bootstrap: str, admin: AdminClient):
    topic = unique("invalid")
    # A compacted topic refuses keyless records at the broker; one that was not always
    # compacted can hold them, so this one is delete-only.
    create_topic(admin, topic, partitions=1, config={"cleanup.policy": "delete", "retention.ms": "-1"})
    cleanup = Cleanup(bootstrap)
    send(bootstrap, topic, [(0, "fine", "ok"), (0, None, "no key"), (0, "bad", b"ok\xff")])  # offsets 0, 1, 2
    marker = cleanup.snapshot_marker(topic)
    with cleanup.recovery_session(topic) as session:
        session.restore([with_offsets(marker, {0: 0})])
        delivered: List[ReplayedRecord] = []
        with pytest.raises(ReplayRecordInvalid) as keyless:
            for record in session.records(max_records=1):
                delivered.append(record)
        assert rows(delivered) == [(0, 0, "fine", "ok")]
        assert keyless.value.kind == "replay-record-invalid"
        assert f"{topic}-0 at offset 1 has no key" in keyless.value.message
        # The failed batch ended the replay in the component: continuing would skip offsets 1
        # and 2, so it refuses until the next restore.
        with pytest.raises(InvalidArgument, match="restore again"):
            session.next_batch()
        assert offsets_of(session.snapshot_marker()) == {"0": 0}  # still the restored offsets

        session.restore([with_offsets(marker, {0: 2})])
        with pytest.raises(ReplayRecordInvalid) as undecodable:
            session.next_batch()
        assert f"{topic}-0 at offset 2 cannot be decoded" in undecodable.value.message
        assert "its key or value is not valid UTF-8" in undecodable.value.message
    cleanup.close()


class StuckConsumer(_kafka_consumer.Consumer):
    """Assigns like a consumer but never delivers and never moves (a broker that stopped serving)."""

    def __init__(self, topic: str) -> None:  # noqa: D401 - no real consumer
        self.topic = topic
        self.last = []
        self.assigned: List[Tuple[int, int]] = []

    def assign(self, start):
        self.assigned = list(start)

    def position(self):
        return list(self.assigned)

    def poll(self, max_records, timeout_ms):
        time.sleep(timeout_ms / 1000)
        return []

    def close(self):
        pass


def test_a_replay_without_progress_raises_replay_stalled_within_the_window(scene: Scene, monkeypatch):
    monkeypatch.setattr(scene.cleanup.kafka, "open_consumer", StuckConsumer)
    with scene.cleanup.recovery_session(scene.topic, control_topic=None) as session:
        session.restore([scene.c1], poll_timeout_ms=100, stall_timeout_ms=500)
        started = time.monotonic()
        with pytest.raises(ReplayStalled) as stalled:
            session.next_batch()
        assert time.monotonic() - started < 5
        message = stalled.value.message
        assert stalled.value.kind == "replay-stalled"
        assert "made no progress for 500 ms" in message
        assert "current positions are {0=150, 1=60} and target end offsets are {0=180, 1=70}" in message
        # A checkpoint during the stalled replay still carries the restored offsets.
        assert offsets_of(session.snapshot_marker()) == {"0": 150, "1": 60}


# --- the session's lifetime ------------------------------------------------------------------------


def test_session_lifetime_close_orphans_and_loss(scene: Scene):
    cleanup = scene.cleanup
    def consumers():
        # The data topic's consumers the guest holds (its replay consumer).
        return [r for r in cleanup._host.resources.values() if isinstance(r, _kafka_consumer.Consumer) and r.topic == scene.topic]


    with cleanup.recovery_session(scene.topic, control_topic=None) as session:
        assert isinstance(session, RecoverySession) and not session.closed
        with pytest.raises(InvalidArgument) as nothing:
            session.next_batch()
        assert "call restore first" in nothing.value.message
        with pytest.raises(InvalidArgument) as options:
            session.restore([scene.c1], poll_timeout_ms=0)
        assert "poll timeout above 0" in options.value.message
        with pytest.raises(ValueError):
            session.next_batch(-1)
        session.restore([scene.c1])
        assert len(session.next_batch(5)) == 5
        assert len(consumers()) == 1  # the guest's replay consumer
    assert session.closed and consumers() == []  # dropping the session dropped its consumer
    with pytest.raises(ValueError, match="closed"):
        session.snapshot_marker()
    session.close()  # idempotent

    # A session dropped without close is released at the Cleanup's next guest call.
    forgotten = cleanup.recovery_session(scene.topic, control_topic=None)
    forgotten.restore([scene.c1])
    assert len(consumers()) == 1
    del forgotten
    gc.collect()
    cleanup.snapshot_marker(scene.topic)
    assert consumers() == []

    # Cleanup.close closes the sessions still open.
    still_open = cleanup.recovery_session(scene.topic, control_topic=None)
    still_open.restore([scene.c1])
    cleanup.close()
    assert still_open.closed and consumers() == []

    # An exception from on_before_commit discards the instance: its sessions are lost.
    lost = cleanup.recovery_session(scene.topic, control_topic=None)
    lost.restore([scene.c1])

    class Abort(Exception):
        pass

    def refuse(_plan_id, _rows):
        raise Abort()

    cleanup.on_before_commit = refuse
    with pytest.raises(Abort):
        cleanup.apply(cleanup.render(cleanup.plan("C1", [scene.c1])))
    cleanup.on_before_commit = None
    assert consumers() == []
    with pytest.raises(InternalError) as gone:
        lost.next_batch()
    assert gone.value.kind == "internal" and "lost" in gone.value.message and "Abort" in gone.value.message
    lost.close()
    with cleanup.recovery_session(scene.topic, control_topic=None) as replacement:
        replacement.restore([scene.c1])
        assert sorted(rows(replacement.records())) == scene.after_c1

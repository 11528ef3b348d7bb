"""The SPEC §1 acceptance story applied from Python against a real broker, plus the host
capabilities the component relies on."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient

from action_state_cleanup import (
    BoundaryViolation,
    Cleanup,
    ControlTopicReplication,
    InvalidArgument,
    InvalidControlTopic,
    NewControlTopic,
    PartitionPreview,
    RecoveryRefused,
)

from action_state_cleanup._kafka_config import KafkaCapabilities

from conftest import beginning_offsets, create_topic, delete_topic, produce, send, unique


class Abort(Exception):
    pass


@pytest.fixture
def story(bootstrap: str, admin: AdminClient):
    """A fresh data topic (2 partitions, compact,delete, infinite retention) with 100 records on
    partition 0 (snapshot C0), then 50 more (snapshot C1); its own control topic."""
    data = unique("orders")
    create_topic(admin, data, partitions=2)
    previews = []
    cleanup = Cleanup(bootstrap, f"{data}-cleanup", on_before_commit=lambda plan_id, rows: previews.append((plan_id, rows)))
    produce(cleanup, data, 0, 0, 100)
    c0 = cleanup.snapshot_marker(data)
    produce(cleanup, data, 0, 100, 50)
    c1 = cleanup.snapshot_marker(data)
    yield cleanup, data, c0, c1, previews
    cleanup.close()


def test_spec_story_applied_from_python(story, admin: AdminClient):
    cleanup, data, c0, c1, previews = story
    plan = cleanup.plan("C1", [c1])
    assert plan.topic == data and plan.offsets == {0: 150, 1: 0}
    assert len(plan.topic_id) == 22

    report = cleanup.apply(cleanup.render(plan))
    assert report.outcome == "applied" and report.status == "APPLIED"
    assert report.plan_id == plan.plan_id and report.marked_applied == [plan.plan_id]
    assert report.target == {0: 150, 1: 0}
    assert report.beginnings_after[0] == 150
    assert report.requests.control_writes == 2 and report.requests.admin > 0
    # The operator event arrived once, before the commit, with the preview.
    assert previews == [(plan.plan_id, [PartitionPreview(0, 0, 150, 150, 150), PartitionPreview(1, 0, 0, 0, 0)])]
    assert cleanup.last_preview == previews[0]

    # Kafka itself says partition 0 now begins at 150.
    assert beginning_offsets(admin, data, [0, 1]) == {0: 150, 1: 0}

    with pytest.raises(BoundaryViolation) as refused:
        cleanup.check_recovery([c0])
    error = refused.value
    assert (error.kind, error.topic, error.partition, error.requested, error.boundary) == ("boundary-violation", data, 0, 100, 150)
    assert "100" in error.message and "150" in error.message
    assert error.failure_class == "restore-refused"

    verdict = cleanup.check_recovery([c1])
    assert verdict.enforced and verdict.boundary == {0: 150, 1: 0} and verdict.versioned
    assert [(r.partition, r.requested, r.beginning, r.end) for r in verdict.ranges] == [(0, 150, 150, 150), (1, 0, 0, 0)]

    status = cleanup.status()
    assert [(op.plan_id, op.status) for op in status.operations] == [(plan.plan_id, "APPLIED")]
    assert status.boundary == {0: 150, 1: 0} and status.topic == data
    assert status.topic_id == status.live_topic_id == plan.topic_id

    again = cleanup.apply(cleanup.render(plan))
    assert again.outcome == "already-applied" and again.status == "APPLIED"
    assert cleanup.requests.total >= report.requests.total


def test_dry_run_then_aborted_commit_then_apply(story, admin: AdminClient):
    cleanup, data, c0, _c1, previews = story
    plan_json = cleanup.render(cleanup.plan("C0", [c0]))

    dry = cleanup.apply(plan_json, dry_run=True)
    assert dry.outcome == "dry-run" and dry.status is None
    assert [p.records_to_delete for p in dry.preview] == [100, 0]
    assert beginning_offsets(admin, data, [0]) == {0: 0}

    def refuse(_plan_id, _rows):
        raise Abort("operator said no")

    cleanup.on_before_commit = refuse
    with pytest.raises(Abort):
        cleanup.apply(plan_json)
    # Nothing durable happened: no control topic (it is created only after a yes), nothing
    # deleted.
    assert cleanup.control_topic not in admin.list_topics(timeout=30).topics
    assert beginning_offsets(admin, data, [0]) == {0: 0}

    cleanup.on_before_commit = None
    report = cleanup.apply(plan_json)  # a fresh instance after the aborted call
    assert report.outcome == "applied" and beginning_offsets(admin, data, [0]) == {0: 100}


def test_recovery_without_committed_boundary_is_refused(story, admin: AdminClient):
    cleanup, data, c0, _c1, _ = story
    # Control topic configured but never created (a dry run creates nothing): named as missing,
    # not as a restore the boundary refuses.
    cleanup.apply(cleanup.render(cleanup.plan("C0", [c0])), dry_run=True)
    with pytest.raises(InvalidControlTopic, match="does not exist"):
        cleanup.check_recovery([c0])
    # Created, but nothing committed yet: the restore is refused.
    create_topic(admin, cleanup.control_topic, partitions=1, config={"cleanup.policy": "compact"})
    with pytest.raises(RecoveryRefused, match="contains no committed boundary"):
        cleanup.check_recovery([c0])
    # Standard recovery (no control topic) is allowed and enforces nothing.
    standard = Cleanup(cleanup.kafka.properties["bootstrap.servers"])
    verdict = standard.check_recovery([c0])
    assert not verdict.enforced and verdict.topic == data


def test_capabilities_against_the_broker(bootstrap: str, admin: AdminClient):
    """The 0.3 capabilities as plain Kafka operations (the conformance suite checks them through
    the component; this is the same from Python, one call at a time)."""
    kafka = KafkaCapabilities({"bootstrap.servers": bootstrap}, timeout=30)
    topic = unique("caps")
    missing = unique("missing")
    assert kafka.create_topic(topic, 3, 1, {"cleanup.policy": "compact,delete", "retention.ms": "-1"}) is True
    assert kafka.create_topic(topic, 3, 1, {}) is False  # already exists
    deadline = time.monotonic() + 30
    while (kafka.describe([topic], [], False)[0] or ([], [], []))[2] != [0, 1, 2]:  # the host does not wait
        assert time.monotonic() < deadline, "the created topic never appeared"
        time.sleep(0.1)

    send(bootstrap, topic, [(1, f"k{i}", f"v{i}") for i in range(10)])
    names = ["cleanup.policy", "retention.ms", "no.such.config"]
    described, absent = kafka.describe([topic, missing], names, True)
    assert absent is None and described.partitions == [0, 1, 2] and len(described.topic_id) == 22
    assert described.replication_factor == 1  # created with one replica per partition
    assert described.configs == [("cleanup.policy", "compact,delete"), ("retention.ms", "-1"), ("no.such.config", None)]
    assert described.offsets == [(0, 0, 0), (1, 0, 10), (2, 0, 0)]
    assert kafka.describe([topic], [], False)[0].offsets == [] and kafka.describe([], names, True) == []

    assert kafka.list_offsets(topic, [0, 1, 2], latest=True) == [(0, 0), (1, 10), (2, 0)]
    assert kafka.delete_records(topic, [(1, 4)]) == [(1, 4)]
    assert kafka.list_offsets(topic, [1], latest=False) == [(1, 4)]

    # A plain idempotent writer appends where it is told and returns the offset.
    writer = kafka.open_writer(None)
    assert writer.append(topic, 2, "a", "1") == 0
    assert writer.append(topic, 2, "b", "2") == 1
    writer.close()

    # The consumer: explicit assignment at an offset, bounded polls, the records held.
    send(bootstrap, topic, [(1, "k3", None), (1, "bad", b"ok\xff")])
    consumer = kafka.open_consumer(topic)
    consumer.assign([(1, 6)])
    seen = []
    while len(seen) < 6:
        batch = consumer.poll(3, 5000)
        assert batch, "no progress"
        assert len(batch) <= 3 and consumer.last == batch
        seen.extend(batch)
    assert (1, 12) in consumer.position()  # the next fetch position after the last record
    consumer.close()
    assert [(r.offset, r.key, r.value, r.has_value, r.utf8) for r in seen] == [(o, f"k{o}", f"v{o}", True, True) for o in range(6, 10)] + [
        (10, "k3", None, False, True),
        (11, None, None, True, False),
    ]

    # The cluster: the test broker is node 1, which defaults to one replica (scripts/kafka).
    cluster = kafka.describe_cluster(["default.replication.factor", "no.such.config"])
    assert cluster.brokers == [1]
    assert cluster.configs == [("default.replication.factor", "1"), ("no.such.config", None)]
    assert kafka.describe_cluster([]) == ([1], [])

    # Failures are CapabilityError (the WIT kafka-error case), never raw client exceptions.
    from action_state_cleanup._kafka_errors import CapabilityError

    with pytest.raises(CapabilityError) as failed:
        kafka.delete_records(missing, [(0, 1)])
    assert failed.value.case == "unknown-topic" and failed.value.operation == "delete-records"
    kafka.close()


class ThreeBrokers(KafkaCapabilities):
    """The test broker as a cluster of three brokers that default to three replicas: only the
    answer of `describe-cluster` is changed (the Python tests run one broker); every other
    capability is the real broker's."""

    def describe_cluster(self, names):
        real = super().describe_cluster(names)
        return real._replace(brokers=[1, 2, 3], configs=[(n, "3" if n == "default.replication.factor" else v) for n, v in real.configs])


class ClusterRefused(KafkaCapabilities):
    """Answers `describe-cluster` as a broker does to a principal without DescribeConfigs on the
    cluster."""

    def describe_cluster(self, names):
        from action_state_cleanup._kafka_errors import CapabilityError

        raise CapabilityError("describe-cluster", "configuration of broker 1: denied (test host)", "authorization", 31, "CLUSTER_AUTHORIZATION_FAILED")


def test_a_new_control_topic_gets_the_production_default_and_an_under_replicated_one_a_warning(bootstrap: str, admin: AdminClient):
    data = unique("defaults")
    create_topic(admin, data, partitions=1)
    cleanup = Cleanup(bootstrap, f"{data}-cleanup")
    produce(cleanup, data, 0, 0, 20)
    plan = cleanup.render(cleanup.plan("C1", [cleanup.snapshot_marker(data)]))

    # One broker: the control topic gets one replica, and no warning.
    first = cleanup.apply(plan, dry_run=True)
    assert first.created_control_topic == NewControlTopic(f"{data}-cleanup", 1, 1, 1)
    assert first.warnings == []

    # The same control topic on "three brokers defaulting to three": it has one replica, fewer
    # than the production default; the apply goes on and the report says so, with the fix.
    created = unique("ctl")
    create_topic(admin, created, partitions=1, config={"cleanup.policy": "compact"})
    three = Cleanup(bootstrap, created)
    three.kafka = three._host.kafka = ThreeBrokers(three.kafka.properties, three.kafka.timeout)
    report = three.apply(plan)
    assert report.outcome == "applied" and report.created_control_topic is None
    (warning,) = report.warnings
    assert warning.kind == "under-replicated-control-topic"
    assert warning.replication == ControlTopicReplication(
        created, 1, 3, 2, 3, 3, f'{{"version":1,"partitions":[{{"topic":"{created}","partition":0,"replicas":[1,2,3]}}]}}'
    )
    assert f"control topic {created} has 1 replica but a control topic needs 3 on this cluster (3 brokers" in warning.message
    assert "kafka-reassign-partitions.sh" in warning.message and "min.insync.replicas=2" in warning.message

    # A principal that may not read the brokers' configuration: the check is reported as not
    # done (the second case of the WIT variant, a sentence), and the apply still goes on.
    three.kafka = three._host.kafka = ClusterRefused(three.kafka.properties, three.kafka.timeout)
    again = three.apply(plan)
    assert again.outcome == "already-applied"
    (unchecked,) = again.warnings
    assert unchecked.kind == "replication-unchecked" and unchecked.replication is None
    assert "was not checked" in unchecked.message and "grant the principal DescribeConfigs on the cluster" in unchecked.message

    # An explicit factor wins (and is checked by the component, not by Python).
    with pytest.raises(InvalidArgument) as refused:
        cleanup.apply(plan, replication_factor=0)
    assert "replication factor must be between 1 and 32767, but was 0" in refused.value.message
    with pytest.raises(ValueError):
        cleanup.apply(plan, replication_factor=70_000)
    cleanup.close()
    three.close()


def test_capabilities_answer_a_wide_request_as_one(bootstrap: str, admin: AdminClient):
    """1,100 partitions are three ListOffsets and DeleteRecords requests of at most 500 (the
    host splits a wide call, librdkafka's merge being quadratic): one answer, every partition."""
    kafka = KafkaCapabilities({"bootstrap.servers": bootstrap}, timeout=30)
    topic = unique("wide")
    partitions = list(range(1_100))
    create_topic(admin, topic, partitions=len(partitions))
    send(bootstrap, topic, [(p, f"k{p}-{n}", "v") for p in (0, 499, 500, 1_099) for n in range(3)])
    from action_state_cleanup._kafka_errors import CapabilityError

    deadline = time.monotonic() + 30
    while True:  # the host does not wait for leaders (the component does): the test does
        try:
            ends = dict(kafka.list_offsets(topic, partitions, latest=True))
            break
        except CapabilityError as e:
            # A partition without a leader yet: the broker's code as the host reports it (the
            # component classes it not-leader), or librdkafka's own wait.
            electing = e.code in (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE) or e.case == "not-leader"
            assert electing and time.monotonic() < deadline, e
            time.sleep(0.2)
    assert sorted(ends) == partitions
    assert [ends[p] for p in (0, 1, 499, 500, 1_099)] == [3, 0, 3, 3, 3]
    (described,) = kafka.describe([topic], [], True)
    assert [p for p, _, _ in described.offsets] == partitions
    after = kafka.delete_records(topic, [(p, 2 if p in (499, 500) else 0) for p in partitions])
    assert [p for p, _ in after] == partitions and dict(after)[500] == 2
    assert beginning_offsets(admin, topic, [0, 499, 500, 501]) == {0: 0, 499: 2, 500: 2, 501: 0}
    delete_topic(admin, topic)

"""The Python embedding and the Rust reference CLI against the same broker and control topics:
what one host writes, the other reads identically; what one refuses, the other refuses with the
same error kind (the CLI's `--json` error object)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from action_state_cleanup import BoundaryViolation, Cleanup, CleanupError, ControlTopicCorrupt, TopicChanged

from conftest import beginning_offsets, create_topic, delete_topic, produce, run_cli, unique


@pytest.fixture
def scene(bootstrap: str, admin: AdminClient, tmp_path: Path):
    """The SPEC story's data topic with markers C0 (p0 at 100) and C1 (p0 at 150) written to files,
    and a plan file from C1."""
    data = unique("xhost")
    control = f"{data}-cleanup"
    create_topic(admin, data, partitions=2)
    cleanup = Cleanup(bootstrap, control)
    produce(cleanup, data, 0, 0, 100)
    produce(cleanup, data, 1, 0, 20)
    c0 = cleanup.snapshot_marker(data)
    produce(cleanup, data, 0, 100, 50)
    c1 = cleanup.snapshot_marker(data)
    files = {"c0": tmp_path / "c0.json", "c1": tmp_path / "c1.json", "plan": tmp_path / "plan.json"}
    files["c0"].write_text(c0)
    files["c1"].write_text(c1)
    plan = cleanup.plan("C1", [c1])
    files["plan"].write_text(cleanup.render(plan))
    yield cleanup, data, control, plan, files, {"c0": c0, "c1": c1}
    cleanup.close()


def kafka_args(bootstrap: str, control: str):
    return ["--bootstrap-servers", bootstrap, "--control-topic", control]


def python_status_json(cleanup: Cleanup) -> dict:
    """Python's StatusReport in the CLI's `status --json` shape."""
    status = cleanup.status()
    offsets = lambda o: {str(p): v for p, v in o.items()}  # noqa: E731
    return {
        "controlTopic": status.control_topic,
        "topic": status.topic,
        "topicId": status.topic_id,
        "liveTopicId": status.live_topic_id,
        "boundary": offsets(status.boundary),
        "operations": [
            {
                "planId": op.plan_id,
                "status": op.status,
                "sourceRecoveryPoint": op.plan.source_recovery_point,
                "offsets": offsets(op.plan.offsets),
            }
            for op in status.operations
        ],
        "live": [{"partition": l.partition, "beginning": l.beginning, "end": l.end, "boundary": l.boundary} for l in status.live],
    }


def test_plan_applied_by_cli_is_reported_identically_by_python(scene, cli: Path, bootstrap: str):
    cleanup, data, control, plan, files, _ = scene
    code, applied = run_cli(cli, "apply", "--plan", str(files["plan"]), *kafka_args(bootstrap, control))
    assert code == 0, applied
    assert applied["planId"] == plan.plan_id and applied["status"] == "APPLIED"

    code, cli_status = run_cli(cli, "status", *kafka_args(bootstrap, control))
    assert code == 0, cli_status
    py_status = python_status_json(cleanup)
    assert py_status["operations"] == [
        {"planId": plan.plan_id, "status": "APPLIED", "sourceRecoveryPoint": "C1", "offsets": {"0": 150, "1": 20}}
    ]
    assert py_status["boundary"] == {"0": 150, "1": 20}
    assert py_status == cli_status

    # Python then sees the CLI's plan as already applied.
    assert cleanup.apply(files["plan"].read_text()).outcome == "already-applied"


def test_plan_applied_by_python_is_enforced_by_cli(scene, cli: Path, bootstrap: str, admin: AdminClient):
    cleanup, data, control, plan, files, markers = scene
    report = cleanup.apply(files["plan"].read_text())
    assert report.outcome == "applied"
    assert beginning_offsets(admin, data, [0, 1]) == {0: 150, 1: 20}

    code, refused = run_cli(cli, "check-recovery", "--markers", str(files["c0"]), *kafka_args(bootstrap, control))
    assert code == 3, refused
    assert refused["error"]["kind"] == "boundary-violation"
    with pytest.raises(BoundaryViolation) as python_refused:
        cleanup.check_recovery([markers["c0"]])
    assert refused["error"]["message"] == f"restore refused: {python_refused.value.message}"

    code, allowed = run_cli(cli, "check-recovery", "--markers", str(files["c1"]), *kafka_args(bootstrap, control))
    assert code == 0, allowed
    assert allowed["allowed"] is True and allowed["enforced"] is True
    assert allowed["boundary"] == {"0": 150, "1": 20}

    # And the CLI's status equals Python's.
    code, cli_status = run_cli(cli, "status", *kafka_args(bootstrap, control))
    assert code == 0 and cli_status == python_status_json(cleanup)


def test_recreated_data_topic_is_refused_like_the_cli(scene, cli: Path, bootstrap: str, admin: AdminClient):
    cleanup, data, control, plan, files, markers = scene
    assert cleanup.apply(files["plan"].read_text()).outcome == "applied"

    delete_topic(admin, data)
    create_topic(admin, data, partitions=2)
    # Right after creation the partitions' leaders may still be moving: list-offsets retries
    # NOT_LEADER_FOR_PARTITION within its timeout, so no retry is needed here.
    recreated = cleanup.snapshot_marker(data)
    assert recreated != markers["c1"]  # a new physical topic: a new topic ID

    code, cli_refused = run_cli(cli, "check-recovery", "--markers", str(files["c1"]), *kafka_args(bootstrap, control))
    assert code == 3, cli_refused
    with pytest.raises(TopicChanged) as refused:
        cleanup.check_recovery([markers["c1"]])
    assert cli_refused["error"]["kind"] == refused.value.kind == "topic-changed"
    assert refused.value.topic == data and refused.value.expected_topic_id == plan.topic_id
    assert refused.value.found_topic_id and refused.value.found_topic_id != plan.topic_id

    # A plan for the recreated topic cannot join the old topic's history either; both hosts
    # refuse it with the same kind, and nothing is committed.
    new_plan = cleanup.render(cleanup.plan("C2", [recreated]))
    new_plan_file = files["plan"].with_name("new-plan.json")
    new_plan_file.write_text(new_plan)
    code, cli_apply = run_cli(cli, "apply", "--plan", str(new_plan_file), *kafka_args(bootstrap, control))
    assert code == 3, cli_apply
    with pytest.raises(CleanupError) as python_apply:
        cleanup.apply(new_plan)
    assert python_apply.value.kind == cli_apply["error"]["kind"]
    assert python_apply.value.kind != "kafka", python_apply.value
    assert [op.plan_id for op in cleanup.status().operations] == [plan.plan_id]


def test_control_topic_tombstone_is_refused_like_the_cli(scene, cli: Path, bootstrap: str):
    cleanup, data, control, plan, files, markers = scene
    assert cleanup.apply(files["plan"].read_text()).outcome == "applied"
    # A tombstone for the plan's key: compaction would erase the committed boundary.
    cleanup.kafka.produce("test", control, 0, plan.plan_id, None)

    code, cli_status = run_cli(cli, "status", *kafka_args(bootstrap, control))
    assert code == 3, cli_status
    with pytest.raises(ControlTopicCorrupt) as refused:
        cleanup.status()
    assert cli_status["error"]["kind"] == refused.value.kind == "control-topic-corrupt"

    code, cli_check = run_cli(cli, "check-recovery", "--markers", str(files["c1"]), *kafka_args(bootstrap, control))
    assert code == 3, cli_check
    with pytest.raises(ControlTopicCorrupt) as refused_recovery:
        cleanup.check_recovery([markers["c1"]])
    assert cli_check["error"]["kind"] == refused_recovery.value.kind

    code, cli_apply = run_cli(cli, "apply", "--plan", str(files["plan"]), *kafka_args(bootstrap, control))
    assert code == 3, cli_apply
    with pytest.raises(ControlTopicCorrupt) as refused_apply:
        cleanup.apply(files["plan"].read_text())
    assert cli_apply["error"]["kind"] == refused_apply.value.kind == "control-topic-corrupt"

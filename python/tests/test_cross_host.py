"""The Python embedding and the Rust reference CLI against the same broker and control topics:
what one host writes, the other reads identically; what one refuses, the other refuses with the
same error kind (the CLI's `--json` error object); applies from both at once fence each other."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest
from confluent_kafka.admin import AdminClient

from action_state_cleanup import BoundaryRegression, BoundaryViolation, Cleanup, CleanupError, ControlTopicCorrupt, TopicChanged

from conftest import beginning_offsets, create_topic, delete_topic, produce, run_cli, send, unique


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


def utc(ms):
    """A Kafka timestamp as the CLI's RFC 3339 UTC text with milliseconds, or None."""
    if ms is None:
        return None
    at = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def python_status_json(cleanup: Cleanup) -> dict:
    """Python's StatusReport in the CLI's `status --json` shape."""
    status = cleanup.status()
    offsets = lambda o: {str(p): v for p, v in o.items()}  # noqa: E731
    return {
        "format": 1,
        "controlTopic": status.control_topic,
        "topic": status.topic,
        "topicId": status.topic_id,
        "liveTopicId": status.live_topic_id,
        "boundary": offsets(status.boundary),
        "boundaryOrigins": {str(p): plan_id for p, plan_id in status.boundary_origins.items()},
        "operations": [
            {
                "planId": op.plan_id,
                "status": op.status,
                "sourceRecoveryPoint": op.plan.source_recovery_point,
                "offsets": offsets(op.plan.offsets),
                "committedAt": utc(times.committed_at),
                "appliedAt": utc(times.applied_at),
            }
            for op, times in zip(status.operations, status.times)
        ],
        "live": [{"partition": l.partition, "beginning": l.beginning, "end": l.end, "boundary": l.boundary} for l in status.live],
        "brokenHistory": status.broken_history,
        "unfinished": [op.plan_id for op in status.operations if op.status == "COMMITTED"],
        # Only `status --retained` reads recovery points (the CLI's own step, not the component's).
        "heldBelowNewestPoint": None,
    }


def test_plan_applied_by_cli_is_reported_identically_by_python(scene, cli: Path, bootstrap: str):
    cleanup, data, control, plan, files, _ = scene
    code, applied = run_cli(cli, "apply", "--yes", "--plan", str(files["plan"]), *kafka_args(bootstrap, control))
    assert code == 0, applied
    assert applied["planId"] == plan.plan_id and applied["status"] == "APPLIED"

    code, cli_status = run_cli(cli, "status", *kafka_args(bootstrap, control))
    assert code == 0, cli_status
    py_status = python_status_json(cleanup)
    times = cleanup.status().times[0]
    assert times.committed_at is not None and times.applied_at is not None
    assert abs(times.applied_at / 1000 - time.time()) < 120 and times.committed_at <= times.applied_at
    assert py_status["operations"] == [
        {"planId": plan.plan_id, "status": "APPLIED", "sourceRecoveryPoint": "C1", "offsets": {"0": 150, "1": 20},
         "committedAt": utc(times.committed_at), "appliedAt": utc(times.applied_at)}
    ]
    assert py_status["boundary"] == {"0": 150, "1": 20}
    assert py_status["boundaryOrigins"] == {"0": plan.plan_id, "1": plan.plan_id}
    assert py_status == cli_status

    # Python then sees the CLI's plan as already applied.
    assert cleanup.apply(files["plan"].read_text()).outcome == "already-applied"


def test_plan_applied_by_python_is_enforced_by_cli(scene, cli: Path, bootstrap: str, admin: AdminClient):
    cleanup, data, control, plan, files, markers = scene
    report = cleanup.apply(files["plan"].read_text())
    assert report.outcome == "applied"
    assert beginning_offsets(admin, data, [0, 1]) == {0: 150, 1: 20}

    code, refused = run_cli(cli, "check-recovery", "--markers", str(files["c0"]), *kafka_args(bootstrap, control))
    assert code == 6, refused
    assert refused["error"]["kind"] == "boundary-violation"
    with pytest.raises(BoundaryViolation) as python_refused:
        cleanup.check_recovery([markers["c0"]])
    assert refused["error"]["message"] == f"restore refused: {python_refused.value.message}"
    # Both hosts carry the component's hint: the plan and recovery point behind the boundary.
    assert python_refused.value.hint and "from recovery point" in python_refused.value.hint
    assert refused["error"]["hint"] == python_refused.value.hint

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
    assert code == 6, cli_refused
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
    code, cli_apply = run_cli(cli, "apply", "--yes", "--plan", str(new_plan_file), *kafka_args(bootstrap, control))
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
    send(bootstrap, control, [(0, plan.plan_id, None)])

    code, cli_status = run_cli(cli, "status", *kafka_args(bootstrap, control))
    assert code == 3, cli_status
    with pytest.raises(ControlTopicCorrupt) as refused:
        cleanup.status()
    assert cli_status["error"]["kind"] == refused.value.kind == "control-topic-corrupt"

    code, cli_check = run_cli(cli, "check-recovery", "--markers", str(files["c1"]), *kafka_args(bootstrap, control))
    assert code == 6, cli_check
    with pytest.raises(ControlTopicCorrupt) as refused_recovery:
        cleanup.check_recovery([markers["c1"]])
    assert cli_check["error"]["kind"] == refused_recovery.value.kind

    code, cli_apply = run_cli(cli, "apply", "--yes", "--plan", str(files["plan"]), *kafka_args(bootstrap, control))
    assert code == 3, cli_apply
    with pytest.raises(ControlTopicCorrupt) as refused_apply:
        cleanup.apply(files["plan"].read_text())
    assert cli_apply["error"]["kind"] == refused_apply.value.kind == "control-topic-corrupt"


# --- concurrent applies from both hosts: the fenced control-topic writer ---------------------------
#
# Both hosts derive the control topic's transactional id the same way, so an apply from either
# fences the other: of two applies of incomparable plans exactly one commits, and the same plan
# applied from both ends APPLIED once.

FENCE_ROUNDS = int(os.environ.get("ASC_FENCE_ROUNDS", "6"))
LOSER_KINDS = ("fenced", "boundary-regression", "offsets-unavailable")


@pytest.fixture
def fence_scene(bootstrap: str, admin: AdminClient, tmp_path: Path):
    """A data topic with 2 partitions and enough records for every round, its topic ID, and a
    Python Cleanup on its control topic."""
    data = unique("xfence")
    control = f"{data}-cleanup"
    create_topic(admin, data, partitions=2)
    cleanup = Cleanup(bootstrap, control)
    produce(cleanup, data, 0, 0, 10 * FENCE_ROUNDS + 20)
    produce(cleanup, data, 1, 0, 10 * FENCE_ROUNDS + 20)
    topic_id = json.loads(cleanup.snapshot_marker(data))["topicId"]
    yield cleanup, data, control, topic_id, tmp_path
    cleanup.close()


def plan_file(cleanup: Cleanup, directory: Path, name: str, topic: str, topic_id: str, p0: int, p1: int) -> Path:
    marker = json.dumps({"schemaVersion": 1, "topic": topic, "topicId": topic_id, "offsets": {"0": p0, "1": p1}})
    path = directory / f"plan-{name}.json"
    path.write_text(cleanup.render(cleanup.plan(name, [marker])))
    return path


def spawn_cli_apply(cli: Path, plan: Path, bootstrap: str, control: str, env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ASC_FAILPOINT")}
    environment.update(env or {})
    return subprocess.Popen(
        [str(cli), "apply", "--yes", "--plan", str(plan), *kafka_args(bootstrap, control), "--json"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def finish(process: subprocess.Popen) -> Tuple[int, dict, str]:
    stdout, stderr = process.communicate(timeout=180)
    return process.returncode, (json.loads(stdout) if stdout.strip() else {}), stderr


def python_apply(cleanup: Cleanup, plan: Path) -> Tuple[Optional[str], Optional[CleanupError]]:
    """(outcome, None) or (None, the refusal)."""
    try:
        return cleanup.apply(plan.read_text()).outcome, None
    except CleanupError as refused:
        return None, refused


def assert_chain(operations) -> None:
    """The control topic holds no incomparable boundaries: every plan is at or above every
    earlier one on every partition."""
    for earlier, later in zip(operations, operations[1:]):
        assert all(later.plan.offsets[p] >= o for p, o in earlier.plan.offsets.items()), (earlier, later)


def test_cli_fenced_at_commit_by_a_python_apply_decides_again(fence_scene, cli: Path, bootstrap: str, admin: AdminClient):
    cleanup, data, control, topic_id, tmp = fence_scene
    cli_plan = plan_file(cleanup, tmp, "cli", data, topic_id, 15, 10)
    python_plan = plan_file(cleanup, tmp, "py", data, topic_id, 10, 15)
    pause = tmp / "pause"
    # The CLI fences and reads, then stops right before writing COMMITTED.
    process = spawn_cli_apply(
        cli, cli_plan, bootstrap, control, {"ASC_FAILPOINT_PAUSE": "before-commit", "ASC_FAILPOINT_PAUSE_FILE": str(pause)}
    )
    try:
        deadline = time.monotonic() + 60
        while not pause.with_suffix(".reached").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the CLI did not reach its commit"
            time.sleep(0.02)
        # Python fences the control topic (taking it from the CLI) and commits its plan.
        report = cleanup.apply(python_plan.read_text())
        assert report.outcome == "applied"
    finally:
        pause.with_suffix(".go").write_text("go")
    code, refused, stderr = finish(process)
    # The CLI's COMMITTED is fenced; deciding again on Python's history, its plan no longer
    # advances the boundary.
    assert code == 3, (refused, stderr)
    assert refused["error"]["kind"] == "boundary-regression", refused
    status = cleanup.status()
    assert [(op.plan_id, op.status) for op in status.operations] == [(report.plan_id, "APPLIED")]
    assert beginning_offsets(admin, data, [0, 1]) == {0: 10, 1: 15}


def test_python_fenced_at_commit_by_a_cli_apply_decides_again(fence_scene, cli: Path, bootstrap: str, admin: AdminClient):
    cleanup, data, control, topic_id, tmp = fence_scene
    cli_plan = plan_file(cleanup, tmp, "cli", data, topic_id, 15, 10)
    python_plan = plan_file(cleanup, tmp, "py", data, topic_id, 10, 15)
    applied_by_cli = []

    def cli_applies_meanwhile(_plan_id, _rows):
        # Python has fenced and read; the CLI fences (taking the topic) and commits first.
        if not applied_by_cli:
            applied_by_cli.append(run_cli(cli, "apply", "--yes", "--plan", str(cli_plan), *kafka_args(bootstrap, control)))

    cleanup.on_before_commit = cli_applies_meanwhile
    with pytest.raises(BoundaryRegression) as refused:
        cleanup.apply(python_plan.read_text())
    ((code, applied),) = applied_by_cli
    assert code == 0 and applied["status"] == "APPLIED", applied
    assert refused.value.partition == 0 and (refused.value.planned, refused.value.boundary) == (10, 15)
    cleanup.on_before_commit = None
    status = cleanup.status()
    assert [(op.plan_id, op.status) for op in status.operations] == [(applied["planId"], "APPLIED")]
    assert beginning_offsets(admin, data, [0, 1]) == {0: 15, 1: 10}


def test_of_concurrent_python_and_cli_applies_of_incomparable_plans_exactly_one_commits(
    fence_scene, cli: Path, bootstrap: str
):
    cleanup, data, control, topic_id, tmp = fence_scene
    wins = {"python": 0, "cli": 0}
    for round_ in range(1, FENCE_ROUNDS + 1):
        # Incomparable with each other, both above anything an earlier round committed.
        cli_plan = plan_file(cleanup, tmp, f"cli{round_}", data, topic_id, 10 * round_ + 5, 10 * round_)
        python_plan = plan_file(cleanup, tmp, f"py{round_}", data, topic_id, 10 * round_, 10 * round_ + 5)
        process = spawn_cli_apply(cli, cli_plan, bootstrap, control)
        # The CLI needs a moment to start: vary where the two applies overlap.
        time.sleep(0.15 * (round_ % 6))
        outcome, python_refused = python_apply(cleanup, python_plan)
        code, cli_json, stderr = finish(process)
        context = f"round {round_}: python {outcome or python_refused!r}; cli {code} {cli_json} {stderr}"
        if outcome is not None:
            # The CLI lost: exit 7 when fenced, 3 when its plan no longer advances the boundary.
            assert outcome == "applied" and code == (7 if cli_json["error"]["kind"] == "fenced" else 3), context
            assert cli_json["error"]["kind"] in LOSER_KINDS, context
            wins["python"] += 1
        else:
            assert code == 0 and cli_json["status"] == "APPLIED", context
            assert python_refused.kind in LOSER_KINDS, context
            wins["cli"] += 1
        # status replays and validates the whole log: it never holds incomparable boundaries.
        status = cleanup.status()
        assert len(status.operations) == round_, context
        assert all(op.status == "APPLIED" for op in status.operations), context
        assert_chain(status.operations)
        code, cli_status = run_cli(cli, "status", *kafka_args(bootstrap, control))
        assert code == 0 and cli_status == python_status_json(cleanup), context
    print(f"{FENCE_ROUNDS} rounds: {wins}")
    # Later applies and restores still work.
    after = plan_file(cleanup, tmp, "after", data, topic_id, 10 * FENCE_ROUNDS + 10, 10 * FENCE_ROUNDS + 10)
    assert cleanup.apply(after.read_text()).outcome == "applied"
    restore = json.dumps({"schemaVersion": 1, "topic": data, "topicId": topic_id, "offsets": {"0": 10 * FENCE_ROUNDS + 10, "1": 10 * FENCE_ROUNDS + 10}})
    assert cleanup.check_recovery([restore]).enforced


def test_the_same_plan_applied_from_python_and_the_cli_at_once_ends_applied(fence_scene, cli: Path, bootstrap: str, admin: AdminClient):
    cleanup, data, control, topic_id, tmp = fence_scene
    outcomes = ("applied", "resumed", "already-applied")
    fenced_twice = 0
    for round_ in range(1, FENCE_ROUNDS + 1):
        plan = plan_file(cleanup, tmp, f"same{round_}", data, topic_id, 10 * round_, 10 * round_)
        process = spawn_cli_apply(cli, plan, bootstrap, control)
        time.sleep(0.15 * (round_ % 6))
        outcome, python_refused = python_apply(cleanup, plan)
        code, cli_json, stderr = finish(process)
        context = f"round {round_}: python {outcome or python_refused!r}; cli {code} {cli_json} {stderr}"
        # The component decides once more after a fenced commit, not again: when the two
        # applies fence each other at both attempts (fence, fenced at commit, fence again, fenced
        # again), the one fenced twice ends `fenced` having committed nothing, and the other
        # applied the plan. An operator reruns it; it then finds the plan applied.
        if python_refused is not None and python_refused.kind == "fenced" and code == 0:
            fenced_twice += 1
            assert cli_json["outcome"] == "applied", context
            outcome = cleanup.apply(plan.read_text()).outcome
            assert outcome == "already-applied", context
        elif code == 7 and cli_json.get("error", {}).get("kind") == "fenced" and outcome is not None:
            fenced_twice += 1
            assert outcome == "applied", context
            code, cli_json = run_cli(cli, "apply", "--yes", "--plan", str(plan), *kafka_args(bootstrap, control))
            assert cli_json.get("outcome") == "already-applied", context
        assert outcome in outcomes, context
        assert code == 0 and cli_json["outcome"] in outcomes and cli_json["status"] == "APPLIED", context
        status = cleanup.status()
        assert status.operations[-1].plan_id == cli_json["planId"], context
        assert [op.status for op in status.operations] == ["APPLIED"] * round_, context
        assert beginning_offsets(admin, data, [0, 1]) == {0: 10 * round_, 1: 10 * round_}
    print(f"{FENCE_ROUNDS} rounds: one side fenced twice in {fenced_twice}")

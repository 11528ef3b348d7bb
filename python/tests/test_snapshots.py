"""Planning straight from real Flink checkpoints and savepoints (fixtures/snapshots, written by
real Flink 2.2 and 1.20 jobs; expected plans by Flink's State Processor API): the Python host
reads the files the component asks for and gets the Java tool's plan or refusal."""

from __future__ import annotations

import json
import pathlib

import pytest

from action_state_cleanup import Cleanup, InvalidArgument, InvalidMarker, InvalidSnapshot

REPO = pathlib.Path(__file__).resolve().parents[2]
CASES = sorted(REPO.glob("fixtures/snapshots/*/*/expected.json"))


def test_fixtures_of_both_flink_lines_are_present():
    lines = {path.parent.parent.name for path in CASES}
    assert {"flink-2.2", "flink-1.20"} <= lines
    assert len(CASES) >= 18


@pytest.mark.parametrize("expected_path", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_snapshot_plans_to_the_java_tools_plan_or_refusal(offline: Cleanup, expected_path, monkeypatch):
    expected = json.loads(expected_path.read_text())
    monkeypatch.chdir(REPO)  # the fixtures name their snapshot relative to the repository
    operator = (
        {"operator_uid": expected["operatorUid"]}
        if expected.get("operatorUid")
        else {"operator_uid_hash": expected["operatorUidHash"]}
    )
    if "plan" in expected:
        plan = offline.plan_from_snapshot(expected["checkpoint"], **operator)
        assert offline.render(plan) == expected["plan"]
    else:
        with pytest.raises(InvalidMarker) as raised:
            offline.plan_from_snapshot(expected["checkpoint"], **operator)
        assert expected["error"] in str(raised.value)


def test_inspect_lists_the_operators_and_markers(offline: Cleanup, monkeypatch):
    monkeypatch.chdir(REPO)
    expected = json.loads((REPO / "fixtures/snapshots/flink-1.20/savepoint-large-markers/expected.json").read_text())
    summary = offline.inspect_snapshot(expected["checkpoint"])
    assert summary["checkpoint_id"] == expected["checkpointId"]
    assert summary["format_version"] == expected["metadataVersion"]
    assert sorted(op["id"] for op in summary["operators"]) == sorted(op["id"] for op in expected["operators"])
    marker_operator = next(op for op in summary["operators"] if op["id"] == expected["operatorUidHash"])
    assert len(marker_operator["markers"]) == len(expected["markers"])
    assert all(len(m["offsets"]) == 3000 for m in marker_operator["markers"])
    assert {m["topic"] for m in marker_operator["markers"]} == {m["topic"] for m in expected["markers"]}


def test_an_unknown_uid_names_the_operators_present(offline: Cleanup, monkeypatch):
    monkeypatch.chdir(REPO)
    with pytest.raises(InvalidArgument) as raised:
        offline.plan_from_snapshot("fixtures/snapshots/flink-2.2/savepoint-canonical/savepoint", operator_uid="nope")
    assert '(uid "agent-operator")' in str(raised.value)


def test_a_truncated_metadata_is_an_invalid_snapshot_naming_file_and_offset(offline: Cleanup, tmp_path):
    source = REPO / "fixtures/snapshots/flink-2.2/savepoint-canonical/savepoint/_metadata"
    data = source.read_bytes()
    (tmp_path / "_metadata").write_bytes(data[: len(data) // 3])
    with pytest.raises(InvalidSnapshot) as raised:
        offline.plan_from_snapshot(str(tmp_path), operator_uid="agent-operator")
    message = str(raised.value)
    assert f"{tmp_path}/_metadata is not readable at byte" in message
    assert raised.value.kind == "invalid-snapshot"

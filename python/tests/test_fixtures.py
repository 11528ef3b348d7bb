"""Every golden scenario of fixtures/ through the Python embedding, as host/tests/fixtures.rs does
through the Rust host: plans via verify + render, markers via plan, control logs via the
component's replay-control-log + effective-boundary. Same bytes, same verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Tuple, Union

import pytest

from action_state_cleanup import Cleanup, CleanupError, ControlEntry

from conftest import FIXTURES

Files = List[Tuple[str, str]]
Outcome = Union[Files, CleanupError]

# fixtures/snapshots holds Flink snapshots (test_snapshots.py), not a scenario.
SCENARIOS = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "snapshots") if FIXTURES.is_dir() else []


def read(directory: Path, name: str) -> str:
    # Byte for byte: no newline translation, no trimming.
    return (directory / name).read_bytes().decode("utf-8")


def plan_files(rendered: str, plan_id: str) -> Files:
    return [("expected.json", rendered), ("plan-id.txt", f"{plan_id}\n")]


def run_plan(cleanup: Cleanup, directory: Path) -> Outcome:
    try:
        plan = cleanup.verify(read(directory, "plan.json"))
    except CleanupError as error:
        return error
    return plan_files(cleanup.render(plan), plan.plan_id)


def run_markers(cleanup: Cleanup, directory: Path) -> Outcome:
    markers = json.loads(read(directory, "markers.json"))
    assert isinstance(markers, list) and all(isinstance(m, str) for m in markers), "markers.json must be an array of strings"
    try:
        plan = cleanup.plan(read(directory, "recovery-point.txt"), markers)
    except CleanupError as error:
        return error
    return plan_files(cleanup.render(plan), plan.plan_id)


def run_control(cleanup: Cleanup, directory: Path) -> Outcome:
    items = json.loads(read(directory, "control-log.json"))
    assert isinstance(items, list), "control-log.json must be an array"
    entries = []
    for item in items:
        offset = item.get("offset")
        assert isinstance(offset, int) and offset >= 0, "each entry needs a non-negative integer offset"
        entries.append(ControlEntry(offset, item.get("key"), item.get("value")))
    try:
        operations = cleanup.replay_control_log(entries)
    except CleanupError as error:
        return error
    boundary = cleanup.effective_boundary([op.plan for op in operations])
    text = "".join(f"{op.plan_id} {op.status}\n" for op in operations)
    # Java map rendering of the per-partition maximum, in numeric partition order.
    text += "boundary {" + ", ".join(f"{p}={o}" for p, o in sorted(boundary.items())) + "}\n"
    return [("expected.txt", text)]


def test_fixtures_exist():
    assert len(SCENARIOS) >= 150, f"expected the golden fixtures under {FIXTURES}"


@pytest.mark.parametrize("directory", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_fixture(offline: Cleanup, directory: Path):
    name = directory.name
    if name.startswith("plan-"):
        outcome = run_plan(offline, directory)
    elif name.startswith("markers-"):
        outcome = run_markers(offline, directory)
    elif name.startswith("control-"):
        outcome = run_control(offline, directory)
    else:
        pytest.fail(f"unknown scenario kind: {name}")

    expects_error = (directory / "error.txt").exists()
    if isinstance(outcome, CleanupError):
        assert expects_error, f"expected success, got {outcome.kind}: {outcome.message}"
        wanted = read(directory, "error.txt").rstrip("\n")
        assert wanted in outcome.message, f"error message does not contain {wanted!r}: {outcome.message}"
        # The message is the component's own sentence for the typed case.
        assert str(outcome) == outcome.message and outcome.kind
    else:
        assert not expects_error, f"expected an error containing {read(directory, 'error.txt')!r}, got success"
        for file, actual in outcome:
            expected = read(directory, file)
            assert actual == expected, f"{file} differs"

"""Snapshots where Flink keeps them, from Python: the Python host answers the component's
`snapshot-store` reads through fsspec, so a savepoint and a retained checkpoint uploaded as they
are to a real S3 API server (moto's, started by scripts/stores) plan from their s3:// URIs
exactly as their local copies plan with that URI as recovery point; a missing snapshot is a
`SnapshotUnavailable` naming the URI."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from action_state_cleanup import Cleanup, SnapshotUnavailable
from action_state_cleanup import errors as asc_errors

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = REPO / "fixtures" / "snapshots"
CASES = [
    "flink-2.2/savepoint-canonical/savepoint",
    "flink-1.20/savepoint-canonical/savepoint",
    "flink-2.2/checkpoint-rocksdb-incremental/00000000000000000000000000002103/chk-2",
]


@pytest.fixture(scope="module")
def bucket(monkeypatch_module) -> str:
    endpoint = os.environ.get("ASC_S3_ENDPOINT") or subprocess.run(
        [str(REPO / "scripts" / "stores"), "start", "s3"], check=True, capture_output=True, text=True
    ).stdout.strip()
    for key, value in {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch_module.setenv(key, value)
    import s3fs

    fs = s3fs.S3FileSystem(endpoint_url=endpoint)
    name = f"py-snapshots-{uuid.uuid4().hex[:12]}"
    fs.mkdir(name)
    for path in SNAPSHOTS.rglob("*"):
        if path.is_file():
            fs.put_file(str(path), f"{name}/flink/{path.relative_to(SNAPSHOTS)}")
    return name


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("case", CASES)
def test_a_snapshot_plans_from_s3_as_its_local_copy(offline: Cleanup, bucket: str, case: str):
    uri = f"s3://{bucket}/flink/{case}"
    from_s3 = offline.plan_from_snapshot(uri, operator_uid="agent-operator")
    from_disk = offline.plan_from_snapshot(SNAPSHOTS / case, operator_uid="agent-operator", recovery_point=uri)
    assert from_s3.source_recovery_point == uri
    assert offline.render(from_s3) == offline.render(from_disk)


def test_inspect_reads_the_snapshot_from_s3(offline: Cleanup, bucket: str):
    case = CASES[0]
    from_s3 = offline.inspect_snapshot(f"s3://{bucket}/flink/{case}")
    from_disk = offline.inspect_snapshot(SNAPSHOTS / case)
    assert from_s3 == from_disk


def test_a_missing_snapshot_is_unavailable_naming_the_uri(offline: Cleanup, bucket: str):
    uri = f"s3://{bucket}/flink/no-such-savepoint"
    with pytest.raises(SnapshotUnavailable) as raised:
        offline.plan_from_snapshot(uri, operator_uid="agent-operator")
    assert raised.value.reason == "not-found"
    assert f"{uri}/_metadata does not exist" in raised.value.message


FLINK_WRITTEN = sorted((SNAPSHOTS / "s3").glob("*/*/expected.json"))


@pytest.mark.parametrize("expected_file", FLINK_WRITTEN, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_a_snapshot_flink_wrote_to_s3_plans_as_the_java_tools_path_from_its_uri(
    offline: Cleanup, bucket: str, expected_file: Path
):
    """fixtures/snapshots/s3: objects a real Flink job wrote through flink-s3-fs-presto, with the
    plan the State Processor API made from the same s3:// URI. They go back into the bucket the
    job wrote to (a checkpoint's _metadata names its files by absolute s3://flink-state/… URIs)."""
    import s3fs

    fs = s3fs.S3FileSystem(endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    if not fs.exists("flink-state"):
        fs.mkdir("flink-state")
    objects = expected_file.parent / "bucket"
    for path in objects.rglob("*"):
        if path.is_file():
            fs.put_file(str(path), f"flink-state/{path.relative_to(objects)}")
    expected = json.loads(expected_file.read_text())
    plan = offline.plan_from_snapshot(expected["uri"], operator_uid=expected["operatorUid"])
    assert offline.render(plan) == expected["plan"]


def test_plan_retained_takes_the_minimum_over_every_point_of_a_bucket(offline: Cleanup, bucket: str):
    """The retained API over an s3:// checkpoint directory and savepoint: the same component
    call as the CLI's `plan --retained`."""
    import s3fs

    fs = s3fs.S3FileSystem(endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    root = f"{bucket}/retained"
    job = "00000000000000000000000000002103"
    checkpoint = SNAPSHOTS / "flink-2.2/checkpoint-rocksdb-incremental" / job
    for path in checkpoint.rglob("*"):
        if path.is_file():
            fs.put_file(str(path), f"{root}/checkpoints/{job}/{path.relative_to(checkpoint)}")
    savepoint = SNAPSHOTS / "flink-2.2/savepoint-canonical/savepoint"
    for path in savepoint.rglob("*"):
        if path.is_file():
            fs.put_file(str(path), f"{root}/savepoints/savepoint-000000-aa/{path.relative_to(savepoint)}")
    base = f"s3://{root}"
    planned = offline.plan_retained([f"{base}/checkpoints", f"{base}/savepoints"], operator_uid="agent-operator")
    locations = [point.location for point in planned.points]
    assert locations == [f"{base}/checkpoints/{job}/chk-2", f"{base}/savepoints/savepoint-000000-aa"]
    # The minimum, computed here from each point's own offsets.
    for partition, (offset, holders) in planned.bounded_by.items():
        assert offset == min(point.offsets[partition] for point in planned.points)
        assert holders == [p.location for p in planned.points if p.offsets[partition] == offset]
        assert planned.plan.offsets[partition] == offset
    assert planned.plan.source_recovery_point == planned.recorded
    assert planned.bounds_every_partition
    # Left out on purpose; an exclusion naming nothing is reported.
    only = offline.plan_retained(
        [f"{base}/checkpoints", f"{base}/savepoints"],
        operator_uid="agent-operator",
        exclude=[f"{base}/savepoints/savepoint-000000-aa/_metadata", f"{base}/savepoints/gone"],
    )
    assert [point.location for point in only.points] == [f"{base}/checkpoints/{job}/chk-2"]
    assert only.excluded == [f"{base}/savepoints/savepoint-000000-aa"]
    assert only.unmatched_exclusions == [f"{base}/savepoints/gone"]


def test_plan_retained_names_the_point_that_cannot_be_planned(offline: Cleanup, bucket: str, tmp_path: Path):
    import shutil

    for name, case in [("savepoint-1", "savepoint-canonical"), ("savepoint-2", "savepoint-no-uid")]:
        shutil.copytree(SNAPSHOTS / "flink-2.2" / case / "savepoint", tmp_path / name)
    with pytest.raises(asc_errors.CleanupError) as raised:
        offline.plan_retained([tmp_path], operator_uid="agent-operator")
    assert raised.value.location == str(tmp_path / "savepoint-2")
    with pytest.raises(asc_errors.InvalidArgument) as raised:
        offline.plan_retained([tmp_path / "missing"], operator_uid="agent-operator")
    assert f"retained location {tmp_path / 'missing'}: no such directory" in str(raised.value)

"""Measurements for the Python embedding (not a test): per-call overhead of a trivial component
call; verify, render and plan of a 10,000-partition plan from Python vs the whole Rust CLI process
on the same file (issue 12, goal 4: within 2x); and the wall time of one apply from Python vs the
Rust CLI against the same broker. Each comparison runs side by side in one run. Run with
python/measure (uses python/.venv); `--goal4-only` skips the broker part."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Dict, List

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

import action_state_cleanup as asc
from action_state_cleanup import Cleanup

REPO = Path(__file__).resolve().parents[1]
SPEC_PLAN = (REPO / "fixtures" / "markers-spec-test-vector" / "expected.json").read_text()


def median_us(samples):
    return statistics.median(samples) * 1e6


def per_call(n: int) -> None:
    cleanup = Cleanup()
    cleanup.verify(SPEC_PLAN)
    instance = cleanup._instance
    plan = cleanup.verify(SPEC_PLAN)

    def timed(call):
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
        return samples

    raw = timed(lambda: instance.call("plans", "verify-plan", SPEC_PLAN))
    api = timed(lambda: cleanup.verify(SPEC_PLAN))
    render = timed(lambda: cleanup.render(plan))
    boundary = timed(lambda: cleanup.effective_boundary([]))
    print(f"per-call overhead (median of {n}):")
    print(f"  Cleanup.verify(SPEC plan)               {median_us(api):8.1f} us")
    print(f"  raw wasmtime-py call verify-plan        {median_us(raw):8.1f} us")
    print(f"  Cleanup.render(plan)                    {median_us(render):8.1f} us")
    print(f"  effective_boundary([]) (near-empty)     {median_us(boundary):8.1f} us")
    start = time.perf_counter()
    fresh = Cleanup()
    fresh.verify(SPEC_PLAN)
    print(f"  new Cleanup + first call (cached code)  {(time.perf_counter() - start) * 1e3:8.2f} ms")


def large_plan(cli: Path, partitions: int, rounds: int) -> Dict[str, object]:
    """Issue 12 goal 4: Python `verify`/`render`/`plan` of a large plan against the CLI process
    (interpreter start excluded on the Python side, process start included on the CLI side, as
    the issue states the goal). Rounds alternate the order of the variants."""
    marker = json.dumps(
        {"schemaVersion": 1, "topic": "action-state", "topicId": "W6igbOR0Sjy8fWG5pFs7Lg", "offsets": {str(p): 1000 + 7 * p for p in range(partitions)}},
        separators=(",", ":"),
    )
    cleanup = Cleanup()
    plan = cleanup.plan("C1", [marker])
    text = cleanup.render(plan)
    with tempfile.TemporaryDirectory() as tmp:
        plan_path, marker_path = Path(tmp) / "plan.json", Path(tmp) / "marker.json"
        plan_path.write_text(text)
        marker_path.write_text(marker)

        def cli_run(*args: str) -> None:
            done = subprocess.run([str(cli), *args], capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr

        variants = {
            "rust CLI process: verify --plan FILE": lambda: cli_run("verify", "--plan", str(plan_path)),
            "python Cleanup.verify(text)": lambda: cleanup.verify(text),
            "python Cleanup.render(plan)": lambda: cleanup.render(plan),
            "rust CLI process: plan --markers FILE (renders)": lambda: cli_run("plan", "--recovery-point", "C1", "--markers", str(marker_path)),
            "python Cleanup.render(Cleanup.plan(...))": lambda: cleanup.render(cleanup.plan("C1", [marker])),
        }
        for run in variants.values():  # warm both code caches and the instance
            run()
        samples: Dict[str, List[float]] = {label: [] for label in variants}
        for index in range(rounds):
            order = list(variants) if index % 2 == 0 else list(reversed(variants))
            for label in order:
                start = time.perf_counter()
                variants[label]()
                samples[label].append(time.perf_counter() - start)
    assert cleanup.verify(text) == plan and cleanup.render(plan) == text
    median = {label: statistics.median(values) * 1e3 for label, values in samples.items()}
    print(f"{partitions}-partition plan ({len(text) / 1024:.0f} KiB), median of {rounds}, CLI {cli}:")
    for label, value in median.items():
        print(f"  {label:48s} {value:8.2f} ms   (min {min(samples[label]) * 1e3:.2f})")
    cli_verify = median["rust CLI process: verify --plan FILE"]
    cli_plan = median["rust CLI process: plan --markers FILE (renders)"]
    print(f"  goal 4 (<= 2.0x): verify {median['python Cleanup.verify(text)'] / cli_verify:.2f}x, "
          f"render {median['python Cleanup.render(plan)'] / cli_verify:.2f}x of the CLI verify process; "
          f"plan+render {median['python Cleanup.render(Cleanup.plan(...))'] / cli_plan:.2f}x of the CLI plan process")
    print(f"  fast list conversion installed: {asc._values.installed()}")
    return {
        "partitions": partitions,
        "planBytes": len(text),
        "rounds": rounds,
        "medianMs": median,
        "minMs": {label: min(values) * 1e3 for label, values in samples.items()},
        "verifyRatio": median["python Cleanup.verify(text)"] / cli_verify,
        "renderRatio": median["python Cleanup.render(plan)"] / cli_verify,
        "planRatio": median["python Cleanup.render(Cleanup.plan(...))"] / cli_plan,
    }


def make_scene(admin: AdminClient, bootstrap: str, directory: Path, name: str):
    data = f"measure-{name}-{uuid.uuid4().hex[:8]}"
    admin.create_topics(
        [NewTopic(data, 2, 1, config={"cleanup.policy": "compact,delete", "retention.ms": "-1", "retention.bytes": "-1"})]
    )[data].result(30)
    setup = Cleanup(bootstrap)
    deadline = time.monotonic() + 30
    while True:
        try:
            producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
            for partition, count in ((0, 150), (1, 20)):
                for i in range(count):
                    producer.produce(data, key=f"k{i}", value=f"v{i}", partition=partition)
            assert producer.flush(30) == 0
            marker = setup.snapshot_marker(data)
            break
        except asc.CleanupError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    plan_json = setup.render(setup.plan("C1", [marker]))
    setup.close()
    path = directory / f"{name}.json"
    path.write_text(plan_json)
    return data, f"{data}-cleanup", plan_json, path


PY_PROCESS = """
import sys, action_state_cleanup as a
c = a.Cleanup(sys.argv[1], sys.argv[2])
r = c.apply(open(sys.argv[3]).read())
assert r.outcome == "applied", r
"""


def applies(bootstrap: str, cli: Path, rounds: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    rows = {"python apply() call (fresh Cleanup)": [], "python apply() call (reused Cleanup)": [], "python process (interpreter+import+apply)": [], "rust CLI process (apply --json)": []}
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        # Warm both code caches (precompiled components) and the reused Cleanup outside the timing.
        _data, warm_control, warm_plan, _path = make_scene(admin, bootstrap, directory, "warmup")
        warm = Cleanup(bootstrap, warm_control)
        warm.apply(warm_plan)
        subprocess.run([str(cli), "verify", "--plan", str(make_scene(admin, bootstrap, directory, "warm")[3])], capture_output=True)
        for index in range(rounds):
            scenes = {kind: make_scene(admin, bootstrap, directory, f"{kind}{index}") for kind in ("py", "warm", "pyproc", "cli")}
            order = ["py", "warm", "pyproc", "cli"] if index % 2 == 0 else ["cli", "pyproc", "warm", "py"]
            for kind in order:
                _data, control, plan_json, path = scenes[kind]
                if kind == "py":
                    cleanup = Cleanup(bootstrap, control)
                    start = time.perf_counter()
                    report = cleanup.apply(plan_json)
                    rows["python apply() call (fresh Cleanup)"].append(time.perf_counter() - start)
                    assert report.outcome == "applied"
                    counts["python"] = report.requests
                    cleanup.close()
                elif kind == "warm":
                    # A long-lived embedding: one Cleanup whose Kafka clients (and the idempotent
                    # producer's ID) outlive the apply; only the control topic changes.
                    warm.control_topic = control
                    start = time.perf_counter()
                    report = warm.apply(plan_json)
                    rows["python apply() call (reused Cleanup)"].append(time.perf_counter() - start)
                    assert report.outcome == "applied"
                elif kind == "pyproc":
                    start = time.perf_counter()
                    subprocess.run([sys.executable, "-c", PY_PROCESS, bootstrap, control, str(path)], check=True)
                    rows["python process (interpreter+import+apply)"].append(time.perf_counter() - start)
                else:
                    start = time.perf_counter()
                    done = subprocess.run(
                        [str(cli), "apply", "--yes", "--plan", str(path), "--bootstrap-servers", bootstrap, "--control-topic", control, "--json"],
                        capture_output=True,
                        text=True,
                    )
                    rows["rust CLI process (apply --json)"].append(time.perf_counter() - start)
                    assert done.returncode == 0, done.stdout + done.stderr
                    counts["rust"] = json.loads(done.stdout).get("kafkaRequests")
    print(f"one apply (fresh control topic, 2 partitions, 170 records, 150+20 deleted), median of {rounds}:")
    for label, samples in rows.items():
        print(f"  {label:44s} {statistics.median(samples) * 1e3:8.1f} ms   (min {min(samples) * 1e3:.1f}, max {max(samples) * 1e3:.1f})")
    print(f"  capability calls, python: {counts.get('python')}")
    print(f"  capability calls, rust:   {counts.get('rust')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--large-rounds", type=int, default=21)
    parser.add_argument("--goal4-only", action="store_true", help="skip the apply comparison (no broker needed)")
    parser.add_argument("--json", type=Path, help="also write the goal 4 measurement to this file (for scripts/bench)")
    args = parser.parse_args()
    versions = (f"wasmtime-py {__import__('importlib').metadata.version('wasmtime')}, confluent-kafka "
                f"{__import__('importlib').metadata.version('confluent-kafka')} (librdkafka {__import__('confluent_kafka').libversion()[0]}), "
                f"Python {sys.version.split()[0]}")
    print(versions)
    per_call(args.calls)
    bootstrap = os.environ.get("ASC_KAFKA_BOOTSTRAP")
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    release = target / "release" / "action-state-cleanup"
    # The release CLI when built (what scripts/bench measures), else the debug one.
    cli = Path(os.environ.get("ASC_CLI") or (release if release.is_file() else target / "debug" / "action-state-cleanup"))
    if not cli.is_file():
        sys.exit(f"the Rust CLI is not at {cli}")
    goal4 = large_plan(cli, args.partitions, args.large_rounds)
    if args.json:
        args.json.write_text(json.dumps({**goal4, "versions": versions, "cli": str(cli)}, indent=2))
    if args.goal4_only:
        return
    if not bootstrap:
        sys.exit("ASC_KAFKA_BOOTSTRAP is not set: the apply comparison needs a broker")
    applies(bootstrap, cli, args.rounds)


if __name__ == "__main__":
    main()

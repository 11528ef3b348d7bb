"""Shared pytest fixtures: the offline component, the Kafka broker, the Rust CLI, and helpers to
make topics. Kafka and CLI tests FAIL (never skip) when their prerequisites are missing."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from action_state_cleanup import Cleanup

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("ASC_FIXTURES_DIR", REPO / "fixtures"))

#: The data-topic configuration SPEC §5 requires.
SAFE_TOPIC_CONFIG = {"cleanup.policy": "compact,delete", "retention.ms": "-1", "retention.bytes": "-1"}


@pytest.fixture(scope="session")
def offline() -> Cleanup:
    """A Cleanup without Kafka: the pure functions of the component."""
    return Cleanup()


@pytest.fixture(scope="session")
def bootstrap() -> str:
    servers = os.environ.get("ASC_KAFKA_BOOTSTRAP", "").strip()
    if not servers:
        pytest.fail(
            "ASC_KAFKA_BOOTSTRAP is not set: the Kafka tests need a broker. Run scripts/test (it starts one), "
            "or start one with scripts/kafka start and export ASC_KAFKA_BOOTSTRAP=<its bootstrap>.",
            pytrace=False,
        )
    return servers


def sasl(bootstrap: str, user: str, password: Optional[str] = None) -> Dict[str, str]:
    """Client properties for a `scripts/kafka start --sasl` broker: SASL/PLAIN as `user`, with
    the password the script gives it (`<user>-secret`) unless another is named."""
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": f"{user}-secret" if password is None else password,
    }


@pytest.fixture(scope="session")
def sasl_bootstrap(tmp_path_factory) -> Iterator[str]:
    """A broker that requires SASL/PLAIN and checks ACLs (users admin, alice and bob; admin is the
    super user, bob holds no ACL): $ASC_KAFKA_SASL_BOOTSTRAP when set, else one this session
    starts with `scripts/kafka start --sasl` in a state folder of its own and stops at its end."""
    given = os.environ.get("ASC_KAFKA_SASL_BOOTSTRAP", "").strip()
    if given:
        yield given
        return
    state = str(tmp_path_factory.mktemp("kafka-sasl"))
    script = str(REPO / "scripts" / "kafka")
    started = subprocess.run([script, "start", "--sasl", "--state-dir", state], capture_output=True, text=True, timeout=600)
    try:
        if started.returncode != 0 or not started.stdout.strip():
            pytest.fail(f"scripts/kafka start --sasl failed (exit {started.returncode}): {started.stderr.strip()}", pytrace=False)
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([script, "stop", "--state-dir", state], capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def cli() -> Path:
    """The Rust reference CLI: $ASC_CLI, else ${CARGO_TARGET_DIR:-<repo>/target}/debug/action-state-cleanup."""
    explicit = os.environ.get("ASC_CLI")
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = Path(explicit) if explicit else target / "debug" / "action-state-cleanup"
    if not path.is_file():
        pytest.fail(
            f"the Rust CLI is not at {path}: build it (cargo build -p action-state-cleanup) or set ASC_CLI",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap})


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topic(admin: AdminClient, topic: str, partitions: int = 2, config: Optional[Dict[str, str]] = None, wait: bool = True) -> None:
    """Creates a topic and (unless `wait` is false) waits until its metadata shows every
    partition; retries while a deleted topic of the same name is still being removed."""
    deadline = time.monotonic() + 60
    while True:
        future = admin.create_topics([NewTopic(topic, partitions, 1, config=dict(config or SAFE_TOPIC_CONFIG))])[topic]
        try:
            future.result(timeout=30)
            break
        except KafkaException as e:
            error = e.args[0]
            if time.monotonic() > deadline or error.code() not in (KafkaError.TOPIC_ALREADY_EXISTS, KafkaError.UNKNOWN_TOPIC_OR_PART):
                raise
            time.sleep(0.5)
    while wait:
        metadata = admin.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is not None and metadata.error is None and len(metadata.partitions) == partitions:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {topic} did not appear")
        time.sleep(0.1)


def delete_topic(admin: AdminClient, topic: str) -> None:
    admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout=30)
    deadline = time.monotonic() + 60
    while topic in admin.list_topics(timeout=10).topics:
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {topic} was not deleted")
        time.sleep(0.2)


def beginning_offsets(admin: AdminClient, topic: str, partitions: List[int]) -> Dict[int, int]:
    """Log start offsets straight from Kafka (independent of the component)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.earliest() for p in partitions}, request_timeout=30)
    return {tp.partition: future.result(timeout=30).offset for tp, future in futures.items()}


def send(bootstrap: str, topic: str, rows) -> None:
    """Writes (partition, key, value) rows with a plain producer (value None: a tombstone) and
    waits until every one is acknowledged."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": "true"})
    failures = []
    for partition, key, value in rows:
        producer.produce(topic, key=key, value=value, partition=partition, on_delivery=lambda e, _m: e and failures.append(e))
        producer.poll(0)
    assert producer.flush(30) == 0 and not failures, failures


def produce(cleanup: Cleanup, topic: str, partition: int, start: int, count: int) -> None:
    send(cleanup.kafka.properties["bootstrap.servers"], topic, [(partition, f"action-{i}", f"done-{i}") for i in range(start, start + count)])


def run_cli(cli: Path, *args: str, timeout: float = 180) -> Tuple[int, dict]:
    """Runs the CLI with --json; returns (exit code, parsed stdout)."""
    completed = subprocess.run([str(cli), *args, "--json"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    try:
        document = json.loads(completed.stdout) if completed.stdout.strip() else {}
    except json.JSONDecodeError:
        raise AssertionError(f"CLI printed non-JSON: {completed.stdout!r} (stderr {completed.stderr!r})")
    return completed.returncode, document

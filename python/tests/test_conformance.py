"""The capability conformance suite (guest/conformance, world `conformance`) against this host's
imports and a real broker: the Python host passes every check of all five targets (a live
broker, a dead address, a principal without ACLs and a wrong password, the last two on a
SASL broker with ACLs, and a topic deleted and recreated while a deletion is in flight), and
the suite fails against a Python host that lies in each way it checks. A host passes the
capability contract 0.3 exactly when this suite passes."""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient

from action_state_cleanup import _component
from action_state_cleanup._kafka_config import KafkaCapabilities
from action_state_cleanup._kafka_errors import AppendFenced, CapabilityError
from action_state_cleanup._component import record

from conftest import REPO, create_topic, sasl, send, unique


@pytest.fixture(scope="session")
def suite_component() -> _component.LoadedComponent:
    """The conformance component: $ASC_COMPONENTS_DIR/conformance.wasm, else the cargo target's."""
    folder = os.environ.get("ASC_COMPONENTS_DIR") or Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target") / "components"
    path = Path(folder) / "conformance.wasm"
    if not path.is_file():
        pytest.fail(f"the conformance component is not at {path}: build it (cargo build -p action-state-cleanup)", pytrace=False)
    return _component.LoadedComponent(path)


def run_suite(loaded: _component.LoadedComponent, kafka: KafkaCapabilities, target: str, existing_topic: Optional[str] = None) -> List:
    host = _component.HostState(kafka, None)
    instance = _component.ComponentInstance(loaded, _component.build_linker(loaded.engine, host))
    inputs = record(target=target, topic_prefix=f"{unique('conformance')}-", existing_topic=existing_topic)
    report = instance.call("suite", "run", inputs)
    host.close_resources()
    return list(report.checks)


def failures(checks: List) -> List[str]:
    return [f"{c.name}: {c.detail}" for c in checks if not c.passed]


def live(bootstrap: str) -> KafkaCapabilities:
    return KafkaCapabilities({"bootstrap.servers": bootstrap}, timeout=30)


def test_the_python_host_passes_every_check_against_a_live_broker(suite_component, bootstrap: str):
    checks = run_suite(suite_component, live(bootstrap), "live")
    assert len(checks) >= 30, [c.name for c in checks]
    assert failures(checks) == []


def test_the_python_host_passes_every_check_on_a_dead_connection(suite_component):
    # Nothing listens on port 1.
    checks = run_suite(suite_component, KafkaCapabilities({"bootstrap.servers": "127.0.0.1:1"}, timeout=3), "unreachable")
    assert len(checks) >= 6, [c.name for c in checks]
    assert failures(checks) == []


@pytest.fixture(scope="session")
def forbidden_topic(sasl_bootstrap: str) -> str:
    """A topic on the SASL broker, created by admin; bob holds no ACL for it."""
    topic = unique("conformance-forbidden")
    create_topic(AdminClient(sasl(sasl_bootstrap, "admin")), topic, partitions=1)
    return topic


def bob(sasl_bootstrap: str, password: Optional[str] = None, kind=KafkaCapabilities) -> KafkaCapabilities:
    return kind(sasl(sasl_bootstrap, "bob", password), timeout=30)


def test_the_python_host_passes_every_check_as_a_principal_without_acls(suite_component, sasl_bootstrap: str, forbidden_topic: str):
    checks = run_suite(suite_component, bob(sasl_bootstrap), "unauthorized", forbidden_topic)
    assert len(checks) >= 6, [c.name for c in checks]
    assert failures(checks) == []


def test_the_python_host_passes_every_check_with_a_wrong_password(suite_component, sasl_bootstrap: str):
    checks = run_suite(suite_component, bob(sasl_bootstrap, "not-bobs-password"), "unauthenticated")
    assert len(checks) >= 5, [c.name for c in checks]
    assert failures(checks) == []


class EndPlusOne(KafkaCapabilities):
    def list_offsets(self, topic, partitions, latest):
        return [(p, o + 1 if latest else o) for p, o in super().list_offsets(topic, partitions, latest)]


class MissingIsError(KafkaCapabilities):
    def describe(self, topics, names, with_offsets):
        found = super().describe(topics, names, with_offsets)
        if any(m is None for m in found):
            raise CapabilityError("describe", "no such topic (lie)", "unknown-topic", 3, "UNKNOWN_TOPIC_OR_PART")
        return found


class EverythingIsOther(KafkaCapabilities):
    def list_offsets(self, topic, partitions, latest):
        try:
            return super().list_offsets(topic, partitions, latest)
        except CapabilityError as e:
            raise CapabilityError(e.operation, e.message, "other", e.code, e.name) from None


class ReplicationUnknown(KafkaCapabilities):
    """Answers replication factor 0 for every topic and no value for any broker configuration."""

    def describe(self, topics, names, with_offsets):
        return [None if m is None else m._replace(replication_factor=0) for m in super().describe(topics, names, with_offsets)]

    def describe_cluster(self, names):
        real = super().describe_cluster(names)
        return real._replace(configs=[(n, None) for n, _ in real.configs])


class NoFencing(KafkaCapabilities):
    def open_writer(self, transactional_id: Optional[str]):
        writer = super().open_writer(transactional_id)
        append = writer.append

        def unfenced(*args):
            try:
                return append(*args)
            except AppendFenced:
                return 0

        writer.append = unfenced
        return writer


@pytest.mark.parametrize(
    "liar, check",
    [
        (EndPlusOne, "list-offsets latest is the end"),
        (NoFencing, "the older writer's append fails with fenced"),
        (MissingIsError, "describe answers none for a topic that does not exist"),
        (EverythingIsOther, "list-offsets of a missing topic fails with unknown-topic"),
        (ReplicationUnknown, "describe gives the replication factor a topic was created with"),
    ],
)
def test_the_suite_fails_a_python_host_that_lies(suite_component, bootstrap: str, liar, check: str):
    failed = failures(run_suite(suite_component, liar({"bootstrap.servers": bootstrap}, timeout=30), "live"))
    assert any(check in f for f in failed), failed


class ForbiddenIsMissing(KafkaCapabilities):
    """Answers a topic the principal may not describe as missing (the broker's
    TOPIC_AUTHORIZATION_FAILED, which the host reports as it came)."""

    def describe(self, topics, names, with_offsets):
        try:
            return super().describe(topics, names, with_offsets)
        except CapabilityError as e:
            if e.code != KafkaError.TOPIC_AUTHORIZATION_FAILED:
                raise
            return [None for _ in topics]


class RefusedLoginIsTimeout(KafkaCapabilities):
    """Reports the refused login as the timeout that would follow it."""

    def describe(self, topics, names, with_offsets):
        try:
            return super().describe(topics, names, with_offsets)
        except CapabilityError as e:
            if e.case != "authentication":
                raise
            raise CapabilityError(e.operation, "timed out (lie)", "timeout", KafkaError._TIMED_OUT, "_TIMED_OUT") from None


def test_the_suite_fails_a_python_host_that_hides_a_missing_acl(suite_component, sasl_bootstrap: str, forbidden_topic: str):
    failed = failures(run_suite(suite_component, bob(sasl_bootstrap, kind=ForbiddenIsMissing), "unauthorized", forbidden_topic))
    assert any("describe of a forbidden topic fails with authorization" in f for f in failed), failed


def test_the_suite_fails_a_python_host_that_reports_a_refused_login_as_a_timeout(suite_component, sasl_bootstrap: str):
    failed = failures(run_suite(suite_component, bob(sasl_bootstrap, "not-bobs-password", RefusedLoginIsTimeout), "unauthenticated"))
    assert any("describe with wrong credentials fails with authentication" in f for f in failed), failed


def test_the_suite_fails_a_python_host_whose_sleep_does_not_wait(suite_component, bootstrap: str, monkeypatch):
    monkeypatch.setattr(_component, "_sleep", lambda _seconds: None)
    failed = failures(run_suite(suite_component, live(bootstrap), "live"))
    assert any("sleep-ms(30) lets now-ms advance" in f for f in failed), failed


# --- target recreated-during-delete ---------------------------------------------------------------

#: The harness's timeline and counts, as wit/suite.wit gives them for `recreated-during-delete`.
DELETE_AFTER = 0.5
RECREATE_AFTER_GONE = 1.5
RECREATED_RECORDS = 10
#: The operation timeout of the host under test: the suite watches the recreated topic this long
#: after the deletion started (a resent request would land within it).
OPERATION_TIMEOUT = 10


def found(admin: AdminClient, topic: str) -> bool:
    """Whether this client's metadata (one request for `topic`) shows the topic."""
    metadata = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
    return metadata is not None and metadata.error is None


def topic_recreated_during_the_suite(bootstrap: str) -> Tuple[str, Future]:
    """The harness of target `recreated-during-delete` (wit/suite.wit): a topic with one partition
    and records that, about 500 ms after this returns (the caller calls `run` at once), is
    deleted and, 1.5 s after this harness's own client no longer finds it, created again with
    one partition and exactly 10 records. Returns the topic and the harness's outcome (its
    failure, if any, is raised by `result()`)."""
    topic = unique("recreated")
    # A metadata request names the topic while it does not exist: it must never create it, even
    # on a broker with auto.create.topics.enable (librdkafka allows auto-creation by default for
    # any client that is not a consumer).
    admin = AdminClient({"bootstrap.servers": bootstrap, "allow.auto.create.topics": "false"})
    create_topic(admin, topic, partitions=1)
    send(bootstrap, topic, [(0, f"before-{i}", "x") for i in range(20)])

    # Created now, so that it holds its producer ID (idempotence: each record written once) by
    # the time it writes the recreated topic's records.
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": "true"})

    def delete_and_recreate() -> None:
        time.sleep(DELETE_AFTER)
        admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout=30)
        deadline = time.monotonic() + 15
        while found(admin, topic):
            assert time.monotonic() < deadline, f"{topic} was still found 15 s after its deletion"
            time.sleep(0.05)
        time.sleep(RECREATE_AFTER_GONE)
        # Retries while the broker still finishes the deletion. The records follow the creation
        # at once (within about 10 ms): a deletion resent to the recreated topic before they are
        # written is refused (offset 5 is past its end) and deletes nothing, which would hide a
        # resending host from the check that matters.
        create_topic(admin, topic, partitions=1, wait=False)
        failed: List[KafkaError] = []
        for i in range(RECREATED_RECORDS):
            producer.produce(topic, key=f"recreated-{i}", value="x", partition=0, on_delivery=lambda e, _m: e and failed.append(e))
        assert producer.flush(30) == 0 and not failed, f"{topic}: records of the recreated topic were not written: {failed}"

    harness = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recreated-during-delete")
    outcome = harness.submit(delete_and_recreate)
    harness.shutdown(wait=False)
    return topic, outcome


def run_recreated_during_delete(suite_component, kafka: KafkaCapabilities) -> List:
    topic, harness = topic_recreated_during_the_suite(kafka.properties["bootstrap.servers"])
    checks = run_suite(suite_component, kafka, "recreated-during-delete", topic)
    harness.result(timeout=60)
    return checks


def test_the_python_host_sends_a_deletion_once_while_the_topic_is_recreated(suite_component, bootstrap: str):
    """The thin-host duty of `delete-records` (wit/kafka-admin.wit): confluent-kafka's
    DeleteRecords looks the partition leaders up before sending, and a lookup that waited for a
    missing topic would send the deletion to the topic recreated meanwhile; the Python host
    answers `unknown-topic` at once instead."""
    checks = run_recreated_during_delete(suite_component, KafkaCapabilities({"bootstrap.servers": bootstrap}, timeout=OPERATION_TIMEOUT))
    assert len(checks) >= 8, [c.name for c in checks]
    assert failures(checks) == []


class ResendsDeletes(KafkaCapabilities):
    """A host with client-side retries, as kafka-clients' Admin.deleteRecords behaves: a deletion
    answered `unknown-topic` is sent again every 200 ms until the operation timeout."""

    #: Set when a resent deletion was refused as out of range: it reached the recreated topic
    #: before the harness wrote its records.
    reached_an_empty_topic = False

    def delete_records(self, topic, before):
        deadline = time.monotonic() + self.timeout
        resent = False
        while True:
            try:
                return super().delete_records(topic, before)
            except CapabilityError as e:
                self.reached_an_empty_topic |= resent and e.case == "offset-out-of-range"
                if e.case != "unknown-topic" or time.monotonic() >= deadline:
                    raise
            time.sleep(0.2)
            resent = True


def test_the_suite_fails_a_python_host_that_resends_a_deletion(suite_component, bootstrap: str):
    # The harness writes the recreated topic's records within milliseconds of creating it, but a
    # resent deletion can still arrive in between: then it deletes nothing (offset 5 is past the
    # end), and the target fails the host only for its answer. Only that race runs again.
    for _ in range(3):
        host = ResendsDeletes({"bootstrap.servers": bootstrap}, timeout=OPERATION_TIMEOUT)
        failed = failures(run_recreated_during_delete(suite_component, host))
        if not host.reached_an_empty_topic:
            break
    assert any("the recreated topic keeps every record" in f for f in failed), failed

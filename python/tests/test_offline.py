"""The package's offline surface: the SPEC test vector, typed errors, the topic-ID encoding, the
bundled component and its imports."""

from __future__ import annotations

import json
import statistics
import time

import pytest
from wasmtime.component import Component

import action_state_cleanup as asc
from action_state_cleanup import Cleanup, InvalidMarker, InvalidPlan, KafkaFailure
from action_state_cleanup._kafka_config import KafkaCapabilities, kafka_uuid

SPEC_PLAN = """{
  "schemaVersion" : 1,
  "planId" : "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d",
  "sourceRecoveryPoint" : "checkpoint-42",
  "topic" : "action-state",
  "topicId" : "topic-id",
  "offsets" : {
    "0" : 10,
    "1" : 20
  }
}
"""


def test_spec_test_vector(offline: Cleanup):
    plan = offline.verify(SPEC_PLAN)
    assert plan.plan_id == "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d"
    assert plan.offsets == {0: 10, 1: 20}
    assert offline.render(plan) == SPEC_PLAN
    assert offline.verify(SPEC_PLAN.encode()) == plan


def test_invalid_plan_is_a_typed_exception(offline: Cleanup):
    with pytest.raises(InvalidPlan) as raised:
        offline.verify(SPEC_PLAN.replace('"0" : 10', '"0" : 11'))
    error = raised.value
    assert error.kind == "invalid-plan"
    assert isinstance(error, asc.CleanupError)
    assert "planId" in error.message or "plan ID" in error.message
    assert str(error) == error.message


def test_plan_from_markers_and_legacy_refusal(offline: Cleanup):
    marker = '{"schemaVersion":1,"topic":"orders","topicId":"W6igbOR0Sjy8fWG5pFs7Lg","offsets":{"0":150,"1":60}}'
    other = '{"schemaVersion":1,"topic":"orders","topicId":"W6igbOR0Sjy8fWG5pFs7Lg","offsets":{"0":180,"1":40}}'
    plan = offline.plan("C1", [marker, other])
    assert plan.offsets == {0: 150, 1: 40} and plan.source_recovery_point == "C1"
    with pytest.raises(InvalidMarker) as raised:
        offline.plan("C1", ['{"0":100}'])
    assert raised.value.kind == "invalid-marker"
    with pytest.raises(TypeError):
        offline.plan("C1", [{"0": 100}])


def test_marker_files_are_split_by_the_component_keeping_every_digit(offline: Cleanup):
    one = '{"schemaVersion":1,"topic":"orders","topicId":"W6igbOR0Sjy8fWG5pFs7Lg","offsets":{"0":9223372036854775807}}'
    two = '{"schemaVersion":1,"topic":"orders","topicId":"W6igbOR0Sjy8fWG5pFs7Lg","offsets":{"0":7}}'
    assert offline.split_markers(f"[{one},\n {two}]") == [one, two]
    assert offline.split_markers(f"{one}\n{two}\n") == [one, two]
    assert offline.split_markers(("[" + json.dumps(one) + "]").encode()) == [one]
    assert offline.plan("C1", offline.split_markers(f"[{one},{two}]")).offsets == {0: 7}
    with pytest.raises(InvalidMarker) as raised:
        offline.split_markers("[]")
    assert raised.value.message == "Recovery marker file holds an empty array"


def test_kafka_calls_without_kafka_are_kafka_failures_not_traps(offline: Cleanup):
    with pytest.raises(KafkaFailure) as raised:
        offline.snapshot_marker("orders")
    error = raised.value
    # The host reports the missing connection as `other` at once (whether to call that
    # retriable is the component's decision).
    assert error.kind == "kafka" and error.cause["tag"] == "other"
    assert "bootstrap_servers" in error.kafka_message
    # The instance survives a refused call.
    assert offline.verify(SPEC_PLAN).plan_id.startswith("99cdeb76")


def test_kafka_uuid_matches_kafkas_url_safe_base64():
    # The same vectors as host/src/kafka/ffi.rs.
    assert kafka_uuid(0, 0) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert kafka_uuid(-1, -1) == "_____________________w"
    assert kafka_uuid(-5 << 56, 0).startswith("-")
    assert len(kafka_uuid(0x0123456789ABCDEF, -5)) == 22
    # Signed (Java long) and unsigned halves give the same text.
    assert kafka_uuid(-1, 1) == kafka_uuid(2**64 - 1, 1)


def test_bundled_component_imports_only_the_wit_capabilities():
    engine = asc._component.loaded().engine
    component = Component.from_file(engine, str(asc.component_path()))
    imports = set(component.type.imports(engine))
    names = ("types", "clock", "kafka-admin", "kafka-writer", "kafka-consumer", "operator-events", "snapshot-store")
    wit = {f"action-state:cleanup/{name}@0.3.0" for name in names}
    assert imports <= wit, f"unexpected imports: {imports - wit}"
    assert "action-state:cleanup/kafka-writer@0.3.0" in imports and "action-state:cleanup/clock@0.3.0" in imports
    exports = set(component.type.exports(engine))
    exported = ("plans", "marker-planning", "coordinator", "recovery", "snapshots")
    assert exports == {f"action-state:cleanup/{name}@0.3.0" for name in exported}


def test_per_call_overhead_is_reported(offline: Cleanup, record_property):
    offline.verify(SPEC_PLAN)
    samples = []
    for _ in range(200):
        start = time.perf_counter()
        offline.verify(SPEC_PLAN)
        samples.append(time.perf_counter() - start)
    median_us = statistics.median(samples) * 1e6
    record_property("verify_median_us", round(median_us, 1))
    # Not a benchmark (python/measure is); only a guard against pathological regressions.
    assert median_us < 50_000


def test_interrupt_inside_a_capability_fails_the_call_cleanly(monkeypatch):
    cleanup = Cleanup("127.0.0.1:9", "control")

    def interrupted(self, topics, names, with_offsets):
        raise KeyboardInterrupt

    monkeypatch.setattr(KafkaCapabilities, "describe", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cleanup.snapshot_marker("orders")
    # The guest saw a kafka-error and returned normally: the instance is kept.
    kept = cleanup._instance
    assert kept is not None
    # The guest saw a kafka-error (not a swallowed exception) and the next call works.
    assert cleanup.verify(SPEC_PLAN).plan_id.startswith("99cdeb76")
    assert cleanup._instance is kept
    monkeypatch.undo()


def test_component_path_is_inside_the_package():
    path = asc.component_path()
    assert path.name == "cleanup.wasm" and path.parent.name == "action_state_cleanup" and path.stat().st_size > 100_000


def test_kafka_properties_accept_librdkafka_and_keyword_spellings():
    cleanup = Cleanup("b:1", "control", security_protocol="SASL_SSL", enable_ssl_certificate_verification=False,
                      **{"sasl.mechanism": "PLAIN", "bootstrap.servers": "ignored:1"})
    assert cleanup.kafka.properties == {
        "security.protocol": "SASL_SSL",
        "enable.ssl.certificate.verification": "false",
        "sasl.mechanism": "PLAIN",
        "bootstrap.servers": "b:1",
    }
    assert Cleanup().kafka is None


def test_unreachable_broker_is_a_retriable_kafka_failure():
    cleanup = Cleanup("127.0.0.1:9", "control", timeout=2)
    with pytest.raises(KafkaFailure) as raised:
        cleanup.status()
    error = raised.value
    assert error.kind == "kafka" and error.retriable
    assert error.cause is not None and error.cause["tag"] in ("transport", "timeout"), error.cause
    cleanup.close()


def test_a_component_this_host_cannot_link_is_an_internal_error(tmp_path):
    # A component importing a function the host does not define (here: an unknown interface).
    wat = """(component
      (import "action-state:cleanup/unknown@0.1.0" (instance (export "f" (func))))
    )"""
    path = tmp_path / "other.wat"
    path.write_text(wat)
    cleanup = Cleanup(component=path)
    with pytest.raises(asc.InternalError) as raised:
        cleanup.verify(SPEC_PLAN)
    assert raised.value.kind == "internal" and "cannot instantiate" in raised.value.message


def test_the_package_exports_only_its_public_api():
    # What `from action_state_cleanup import *` gives: the Cleanup and session classes, the
    # dataclasses and the typed errors. The Kafka capability classes stay in their private modules.
    exported = set(asc.__all__)
    assert {"Cleanup", "RecoverySession", "Plan", "ApplyReport", "Verdict", "CleanupError", "BoundaryViolation"} <= exported
    assert not [name for name in exported if name.startswith("_")]
    assert not exported & {"KafkaCapabilities", "CapabilityError", "AppendFenced", "FencedWriter", "ReplayConsumer", "transactional_id", "kafka_uuid"}
    for name in exported:
        assert getattr(asc, name) is not None, name
    errors = {name for name in exported if isinstance(getattr(asc, name), type) and issubclass(getattr(asc, name), asc.CleanupError)}
    # The 18 WIT cleanup-error cases, CleanupError, InternalError, and SnapshotUnavailable (a
    # snapshot's store did not give a file: the WIT snapshot-failure's store case).
    assert len(errors) == 21

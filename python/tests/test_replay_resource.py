"""The `kafka-consumer` import (resource replay-consumer) through wasmtime, driven by a small
test component (tests/data/replay-probe.wat) so that each call can be checked in isolation:
constructor, assign, poll and drop cross the canonical ABI like a guest's would. The cleanup
component drives the same import through its recovery sessions (test_recovery_session.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from wasmtime import Store
from wasmtime.component import Component

from action_state_cleanup import KafkaCapabilities, _component

from conftest import unique

PROBE = Path(__file__).with_name("data") / "replay-probe.wat"


@pytest.fixture(scope="module")
def probe():
    loaded = _component.loaded()
    return loaded, Component(loaded.engine, PROBE.read_text())


def run_probe(probe, kafka: KafkaCapabilities, *args):
    loaded, component = probe
    host = _component.HostState(kafka, None)
    store = Store(loaded.engine)
    store.set_epoch_deadline(10_000)
    instance = _component.build_linker(loaded.engine, host).instantiate(store, component)
    result = instance.get_func(store, "run")(store, *args)
    return result, host


def test_replay_consumer_resource_through_the_canonical_abi(probe, bootstrap: str):
    kafka = KafkaCapabilities({"bootstrap.servers": bootstrap})
    topic = unique("replay")
    assert kafka.create_topic(topic, 2, 1, {})
    kafka.produce_batch(topic, [(1, f"k{i}", f"v{i}") for i in range(10)])

    (status, count, first), host = run_probe(probe, kafka, topic, 1, 4, 3)
    assert status == 0, "assign and poll succeeded"
    assert count == 3 and first == 4  # at most max-records, starting at the assigned offset
    assert host.consumers == {}  # the guest dropped its consumer: the destructor closed it
    assert kafka.counts.consumer_polls == 1
    kafka.close()


def test_replay_consumer_failures_are_kafka_errors_not_traps(probe, bootstrap: str):
    # librdkafka refuses the configuration: the constructor still returns a handle and the
    # first call (assign) reports the failure as the WIT kafka-error.
    broken = KafkaCapabilities({"bootstrap.servers": bootstrap, "no.such.property": "1"})
    (status, count, _), host = run_probe(probe, broken, unique("replay"), 0, 0, 1)
    assert (status, count) == (1, 0)
    assert host.consumers == {}

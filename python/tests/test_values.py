"""The fast list conversion (`_values`) gives exactly what wasmtime-py's own conversion gives,
in both directions, for every shape of list the plans interface returns, and is what makes a
10,000-partition plan cheap to verify and render (issue 12, goal 4)."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from wasmtime.component import Record

from action_state_cleanup import Cleanup, InvalidPlan, _convert, _values
from action_state_cleanup._component import record
from action_state_cleanup._values import RecordColumns

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TOPIC_ID = "W6igbOR0Sjy8fWG5pFs7Lg"


def marker(offsets: dict) -> str:
    return json.dumps({"schemaVersion": 1, "topic": "orders", "topicId": TOPIC_ID, "offsets": {str(p): o for p, o in offsets.items()}})


@contextmanager
def wasmtime_py_conversion():
    """wasmtime-py's own list conversion for the duration of the block."""
    _values.uninstall()
    assert not _values.installed()
    try:
        yield
    finally:
        _values.install()
        assert _values.installed()


def both(call):
    """`call()` with the fast conversion and with wasmtime-py's."""
    fast = call()
    with wasmtime_py_conversion():
        reference = call()
    return fast, reference


def plain(value):
    """A lifted value with every Record and RecordColumns turned into dicts and lists."""
    if isinstance(value, Record):
        return {name: plain(v) for name, v in vars(value).items()}
    if isinstance(value, (list, tuple, RecordColumns)):
        return [plain(v) for v in value]
    if hasattr(value, "tag") and hasattr(value, "payload"):
        return {"tag": value.tag, "payload": plain(value.payload)}
    return value


def test_fast_conversion_is_installed_with_the_package():
    assert _values.installed()


def test_large_plan_lifts_as_columns_equal_to_wasmtime_py_records(offline: Cleanup):
    offsets = {p: (p * 7919) % 100_003 for p in range(10_000)}
    text = offline.render(offline.plan("C1", [marker(offsets)]))
    instance = offline._current_instance()
    fast, reference = both(lambda: instance.call("plans", "verify-plan", text))
    assert fast[0] == reference[0] == "ok"
    assert isinstance(fast[1].offsets, RecordColumns) and isinstance(reference[1].offsets, list)
    assert len(fast[1].offsets) == 10_000
    assert fast[1].offsets == reference[1].offsets
    assert plain(fast[1]) == plain(reference[1])
    assert dict(zip(fast[1].offsets.column("partition"), fast[1].offsets.column("offset"))) == offsets


def test_plan_api_results_are_identical_with_either_conversion(offline: Cleanup):
    offsets = {p: 2**63 - 1 - p for p in range(3000)}
    fast, reference = both(lambda: offline.plan("C9", [marker(offsets), marker({p: 5 for p in range(3000)})]))
    assert fast == reference and fast.offsets == {p: 5 for p in range(3000)}
    assert type(fast.offsets) is dict
    text, reference_text = both(lambda: offline.render(fast))
    assert text == reference_text
    verified, reference_verified = both(lambda: offline.verify(text))
    assert verified == reference_verified == fast


def test_lowered_columns_and_records_render_the_same_bytes(offline: Cleanup):
    plan = offline.plan("C1", [marker({p: p + 1 for p in range(500)})])
    instance = offline._current_instance()
    records = [record(partition=p, offset=o) for p, o in plan.offsets.items()]
    columns = RecordColumns(("partition", "offset"), (list(plan.offsets), list(plan.offsets.values())))

    def render(offsets):
        return instance.call(
            "plans",
            "render-plan",
            record(
                schema_version=1,
                plan_id=plan.plan_id,
                source_recovery_point="C1",
                topic="orders",
                topic_id=TOPIC_ID,
                offsets=offsets,
            ),
        )

    from_records, reference = both(lambda: render(records))
    assert render(columns) == from_records == reference == offline.render(plan)


def test_nested_lists_strings_enums_and_options_lift_like_wasmtime_py(offline: Cleanup):
    # replay-control-log returns list<control-record>: records with an enum and a nested plan
    # (strings and a list of records); check-advance returns records with three integer fields.
    entries = json.loads((FIXTURES / "control-committed-then-applied" / "control-log.json").read_text())
    values = [record(offset=e["offset"], key=e.get("key"), value=e.get("value")) for e in entries]
    instance = offline._current_instance()
    fast, reference = both(lambda: instance.call("plans", "replay-control-log", values))
    assert fast[0] == "ok" and len(fast[1]) >= 1
    assert plain(fast) == plain(reference)
    plan = offline.plan("C1", [marker({0: 10, 1: 20, 2: 30})])
    boundary = [record(partition=0, offset=5), record(partition=1, offset=20), record(partition=2, offset=1)]
    advance = lambda: instance.call("plans", "check-advance", _convert.plan_record(plan), boundary)  # noqa: E731
    fast, reference = both(advance)
    assert plain(fast) == plain(reference)
    assert fast[0] == "ok" and isinstance(fast[1], RecordColumns)
    assert plain(fast[1]) == [{"partition": 0, "from": 5, "to": 10}, {"partition": 1, "from": 20, "to": 20}, {"partition": 2, "from": 1, "to": 30}]
    boundary[2] = record(partition=2, offset=31)
    fast, reference = both(advance)
    assert plain(fast) == plain(reference)
    assert fast[0] == "err" and fast[1].tag == "boundary-regression"
    legacy = lambda: instance.call("plans", "parse-marker", '{"0":100,"7":3}')  # noqa: E731
    fast, reference = both(legacy)
    assert plain(fast) == plain(reference)
    # recovery-marker is untagged in wasmtime-py (a Record or a list): legacy is the list itself.
    assert isinstance(fast[1], RecordColumns) and isinstance(reference[1], list)
    assert plain(fast[1]) == [{"partition": 0, "offset": 100}, {"partition": 7, "offset": 3}]
    versioned, reference_versioned = both(lambda: instance.call("plans", "parse-marker", marker({0: 1})))
    assert isinstance(versioned[1], Record) and plain(versioned) == plain(reference_versioned)
    rendered = instance.call("plans", "render-marker", versioned[1])  # lowers the RecordColumns
    with wasmtime_py_conversion():
        reference_rendered = instance.call("plans", "render-marker", reference_versioned[1])
    assert rendered == reference_rendered and json.loads(rendered)["offsets"] == {"0": 1}


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, "3", None])
def test_values_the_fast_path_cannot_pack_fare_as_with_wasmtime_py(offline: Cleanup, bad):
    # Out of range or not an int: the fast path declines and wasmtime-py's conversion decides
    # (a TypeError, or its silent wrap-around for out-of-range ints), exactly as before.
    plan = offline.plan("C1", [marker({0: 10, 1: 20})])
    instance = offline._current_instance()
    value = record(
        schema_version=1, plan_id=plan.plan_id, source_recovery_point="C1", topic="orders", topic_id=TOPIC_ID,
        offsets=[record(partition=0, offset=10), record(partition=1, offset=bad)],
    )

    def outcome():
        try:
            return ("returned", instance.call("plans", "render-plan", value))
        except Exception as e:  # noqa: BLE001 - the comparison is the point
            return ("raised", type(e))

    fast, reference = both(outcome)
    assert fast == reference
    assert fast[0] == ("returned" if isinstance(bad, int) else "raised")


def test_record_columns_behave_as_a_list_of_records():
    columns = RecordColumns(("partition", "offset"), ([0, 1, 2], [10, 20, 30]))
    records = [record(partition=p, offset=o) for p, o in [(0, 10), (1, 20), (2, 30)]]
    assert len(columns) == 3 and list(columns) == records and columns == records
    assert columns[1].partition == 1 and columns[-1].offset == 30 and columns[0:2] == records[0:2]
    assert columns != records[:2] and columns != [record(partition=0, offset=10)] * 3
    assert list(_values.pairs(columns, "partition", "offset")) == [(0, 10), (1, 20), (2, 30)]
    assert list(_values.pairs(records, "partition", "offset")) == [(0, 10), (1, 20), (2, 30)]
    with pytest.raises(ValueError):
        RecordColumns(("a", "b"), ([1], [1, 2]))


def test_large_plan_conversion_is_at_least_five_times_faster(offline: Cleanup, record_property):
    """Conversion only (the component's parse is the same in both): verify + render of a
    10,000-partition plan, median of 5, fast path against wasmtime-py's conversion."""
    text = offline.render(offline.plan("C1", [marker({p: p for p in range(10_000)})]))
    plan = offline.verify(text)
    # The component's own work, with a result too small to matter: a plan whose ID is wrong.
    wrong = text.replace(plan.plan_id, ("1" if plan.plan_id[0] == "0" else "0") + plan.plan_id[1:])

    def median(call):
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
        return sorted(samples)[2]

    def refused():
        with pytest.raises(InvalidPlan):
            offline.verify(wrong)

    guest = median(refused)
    fast = median(lambda: offline.render(offline.verify(text)))
    with wasmtime_py_conversion():
        reference = median(lambda: offline.render(offline.verify(text)))
    record_property("verify+render fast ms", round(fast * 1e3, 1))
    record_property("verify+render wasmtime-py ms", round(reference * 1e3, 1))
    record_property("verify refused (component only) ms", round(guest * 1e3, 1))
    assert (fast - guest) * 5 < reference - guest, (fast, reference, guest)


def test_records_with_absent_options_are_packed_and_present_ones_fall_back(offline: Cleanup):
    # control-entry has option<string> key and value: all absent packs on the fast path, any
    # present one uses wasmtime-py's conversion; the component answers the same either way.
    instance = offline._current_instance()
    absent = [record(offset=i, key=None, value=None) for i in range(3)]
    present = [record(offset=0, key="k", value=None)] + absent[1:]
    for entries in (absent, present):
        fast, reference = both(lambda: instance.call("plans", "replay-control-log", entries))
        assert plain(fast) == plain(reference)
        assert fast[0] == "err" and fast[1].tag == "control-topic-corrupt"

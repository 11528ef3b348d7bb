"""Values between Python and the component: WIT records and variants to the package's dataclasses
and back, and the range checks of arguments that wasmtime-py could not lower."""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _component, _values
from ._component import Record, Variant, field, record
from .model import (
    ApplyWarning,
    ControlTopicReplication,
    NewControlTopic,
    Offsets,
    Operation,
    PartitionPreview,
    PartitionRange,
    Plan,
    Verdict,
)


def kafka_properties(bootstrap_servers: Optional[str], kafka_config: Dict[str, Any]) -> Dict[str, str]:
    """librdkafka properties: keys as librdkafka spells them (`security.protocol`), or as Python
    keywords without dots (`security_protocol`). `bootstrap_servers` wins over the mapping."""
    properties: Dict[str, str] = {}
    for key, value in kafka_config.items():
        name = key if "." in key else key.replace("_", ".")
        properties[name] = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if bootstrap_servers:
        properties["bootstrap.servers"] = bootstrap_servers
    return properties


def plain(value: Any) -> Any:
    """A lifted WIT value as plain Python (records become dicts keyed by WIT field names)."""
    if isinstance(value, _component.Record):
        return {name: plain(v) for name, v in vars(value).items()}
    if isinstance(value, (list, _values.RecordColumns)):
        return [plain(v) for v in value]
    if isinstance(value, _component.Variant):
        return {"tag": value.tag, "payload": plain(value.payload)}
    return value


def offsets_of(values: Sequence[Any]) -> Offsets:
    return dict(_values.pairs(values, "partition", "offset"))


def offset_records(offsets: Offsets) -> Any:
    partitions, values = list(map(int, offsets.keys())), list(map(int, offsets.values()))
    if _values.installed():
        # Columns, not one Record per partition: lowered without a Python object per record.
        return _values.RecordColumns(("partition", "offset"), (partitions, values))
    return [record(partition=p, offset=o) for p, o in zip(partitions, values)]


def snake(value: Any) -> Any:
    """A WIT value as plain Python data: records become dicts with snake_case keys."""
    if isinstance(value, Record):
        return {name.replace("-", "_"): snake(item) for name, item in vars(value).items()}
    if isinstance(value, (list, tuple, _values.RecordColumns)):
        return [snake(item) for item in value]
    return value


def plan_of(value: Any) -> Plan:
    return Plan(
        schema_version=field(value, "schema_version"),
        plan_id=field(value, "plan_id"),
        source_recovery_point=field(value, "source_recovery_point"),
        topic=value.topic,
        topic_id=field(value, "topic_id"),
        offsets=offsets_of(value.offsets),
    )


def plan_record(plan: Plan) -> Any:
    return record(
        schema_version=plan.schema_version,
        plan_id=plan.plan_id,
        source_recovery_point=plan.source_recovery_point,
        topic=plan.topic,
        topic_id=plan.topic_id,
        offsets=offset_records(plan.offsets),
    )


STATUS = {"committed": "COMMITTED", "applied": "APPLIED"}


def status_name(value: Optional[str]) -> Optional[str]:
    return None if value is None else STATUS[value]


def preview_of(value: Any) -> PartitionPreview:
    return PartitionPreview(value.partition, value.beginning, value.boundary, value.end, field(value, "records_to_delete"))


def new_control_topic_of(value: Any) -> Optional[NewControlTopic]:
    if value is None:
        return None
    return NewControlTopic(
        value.name, value.partitions, field(value, "replication_factor"), field(value, "min_insync_replicas")
    )


def warning_of(value: Any) -> ApplyWarning:
    """WIT `apply-warning`. Its two cases carry a record and a string, which wasmtime-py tells
    apart without a tag ("untagged"): it hands over the payload itself (a tagged `Variant` is
    accepted too)."""
    if isinstance(value, Variant):
        tag, payload = value.tag, value.payload
    else:
        tag = "replication-unchecked" if isinstance(value, str) else "under-replicated-control-topic"
        payload = value
    if tag == "replication-unchecked":
        return ApplyWarning(tag, payload)
    replication = ControlTopicReplication(
        field(payload, "control_topic"),
        field(payload, "replication_factor"),
        field(payload, "recommended_replication_factor"),
        field(payload, "recommended_min_insync_replicas"),
        field(payload, "broker_count"),
        field(payload, "cluster_default_replication_factor"),
        payload.reassignment,
    )
    return ApplyWarning(tag, payload.message, replication)


def operation_of(value: Any) -> Operation:
    return Operation(plan=plan_of(value.plan), status=STATUS[value.status])


def verdict_of(value: Any) -> Verdict:
    return Verdict(
        topic=value.topic,
        boundary=None if value.boundary is None else offsets_of(value.boundary),
        versioned=value.versioned,
        ranges=[PartitionRange(r.partition, r.requested, r.beginning, r.end) for r in value.ranges],
    )


U32_MAX = 2**32 - 1


def u32(value: int, what: str) -> int:
    """A WIT u32 argument: range-checked here, because a value wasmtime-py cannot lower would
    fail inside the call; what the component accepts (e.g. 0) is its own decision."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not 0 <= value <= U32_MAX:
        raise ValueError(f"{what} must be in [0, {U32_MAX}], got {value}")
    return value


def u16(value: int, what: str) -> int:
    """A WIT u16 argument, range-checked like `_u32` (the component refuses 0 and anything above
    32767 itself, with its own message)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"{what} must be in [0, 65535], got {value}")
    return value


def texts(items: Iterable[Union[str, bytes]], what: str) -> List[str]:
    texts = []
    for item in items:
        if isinstance(item, bytes):
            item = item.decode("utf-8")
        if not isinstance(item, str):
            raise TypeError(f"{what} must be JSON texts (str), got {type(item).__name__}")
        texts.append(item)
    return texts

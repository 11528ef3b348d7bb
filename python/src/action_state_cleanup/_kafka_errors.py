"""Kafka failures as the WIT `kafka-error` variant (capability contract 0.3): librdkafka's own
error codes mapped to the cases the component tells apart, with the code, its name and the
client's message kept. A broker's protocol code (positive) is reported as it came, case
`other`: the component classifies those codes itself, by the one table in its core. Nothing
here retries, waits or decides what a case means."""

from __future__ import annotations

from typing import Optional

from confluent_kafka import KafkaError, KafkaException

#: WIT case -> librdkafka's own codes (negative) that map to it, exactly as `types.kafka-error`
#: lists them (tests/test_error_tables.py checks it).
CASES = {
    # _NOENT: confluent-kafka's ListOffsets found no leader because the topic does not exist.
    "unknown-topic": (KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION, KafkaError._NOENT),
    # _SSL: a failed TLS handshake does not heal on retry (Kafka's Java client: SslAuthenticationException).
    "authentication": (KafkaError._AUTHENTICATION, KafkaError._SSL),
    "timeout": (KafkaError._TIMED_OUT, KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT_QUEUE),
    "transport": (
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._RESOLVE,
        KafkaError._DESTROY,
        KafkaError._DESTROY_BROKER,
    ),
    "not-leader": (KafkaError._WAIT_COORD, KafkaError._NO_OFFSET),
    "fenced": (KafkaError._FENCED,),
    "offset-out-of-range": (KafkaError._AUTO_OFFSET_RESET,),
}
_CASE_OF = {code: case for case, codes in CASES.items() for code in codes}


class CapabilityError(Exception):
    """A failed capability call: the WIT `kafka-error` case `case` with the client's `code`,
    its `name` and `message`. `operation` names the call for Python callers."""

    def __init__(self, operation: str, message: str, case: str = "other", code: int = 0, name: str = "") -> None:
        super().__init__(f"Kafka {operation} failed: {name + ': ' if name and name not in message else ''}{message}")
        self.operation = operation
        self.message = message
        self.case = case
        self.code = code
        self.name = name


class AppendFenced(CapabilityError):
    """The `fenced` case: a newer producer with the same transactional id took over."""


def kafka_error(exception: BaseException) -> Optional[KafkaError]:
    if isinstance(exception, KafkaException) and exception.args and isinstance(exception.args[0], KafkaError):
        return exception.args[0]
    return exception if isinstance(exception, KafkaError) else None


def failure(operation: str, exception: BaseException) -> CapabilityError:
    """The `kafka-error` of whatever the client raised (a `CapabilityError` passes through)."""
    if isinstance(exception, CapabilityError):
        return exception
    error = kafka_error(exception)
    if error is None:
        case = "timeout" if isinstance(exception, TimeoutError) else "other"
        return CapabilityError(operation, f"{type(exception).__name__}: {exception}", case)
    case = _CASE_OF.get(error.code(), "other")
    kind = AppendFenced if case == "fenced" else CapabilityError
    return kind(operation, error.str() or error.name(), case, error.code(), error.name())


def may_be_stale(error: CapabilityError) -> bool:
    """Whether the client's metadata cache may be stale after `error`: a broker answered with an
    error (a moved leader, a recreated topic: its protocol code is positive), or librdkafka lost
    or waited on a connection. Telling those broker codes apart is the component's job; re-reading
    the metadata once after any of them costs one request."""
    return error.code > 0 or error.case in ("not-leader", "transport", "timeout")

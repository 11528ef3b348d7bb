"""Kafka failures as the WIT `kafka-error` variant (capability contract 0.3): the one mapping of
confluent-kafka's error codes to the cases the component tells apart, with the code, its name
and the client's message kept. Nothing here retries, waits or decides what a case means."""

from __future__ import annotations

from typing import Optional

from confluent_kafka import KafkaError, KafkaException

#: WIT case -> the codes that map to it, exactly as `types.kafka-error` lists them
#: (tests/test_error_tables.py checks it): Kafka protocol codes (positive), which the component
#: also classifies itself, and librdkafka's own (negative), which only this host knows.
CASES = {
    # _NOENT: confluent-kafka's ListOffsets found no leader because the topic does not exist.
    "unknown-topic": (3, 100, KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION, KafkaError._NOENT),
    "authorization": (29, 30, 31, 53),
    # _SSL: a failed TLS handshake does not heal on retry (Kafka's Java client: SslAuthenticationException).
    "authentication": (58, 33, 34, KafkaError._AUTHENTICATION, KafkaError._SSL),
    "timeout": (7, KafkaError._TIMED_OUT, KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT_QUEUE),
    "transport": (
        8,
        13,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._RESOLVE,
        KafkaError._DESTROY,
        KafkaError._DESTROY_BROKER,
    ),
    "not-leader": (6, 5, 14, 15, 16, 19, 20, 74, 75, 78, KafkaError._WAIT_COORD, KafkaError._NO_OFFSET),
    "fenced": (90, 47, KafkaError._FENCED),
    "policy-violation": (44, 37, 38, 40),
    "offset-out-of-range": (1, KafkaError._AUTO_OFFSET_RESET),
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

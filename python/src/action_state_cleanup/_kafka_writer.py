"""`kafka-writer.writer` over a confluent-kafka Producer: opened once (transactional producers are
initialised, which fences older ones), then one append per call. Failures map to `kafka-error`;
the component decides what to do about them."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from confluent_kafka import KafkaError, KafkaException, Producer

from ._kafka_errors import CapabilityError, failure

OP = "append"


class Writer:
    """A producer with acks=all and idempotence; with a transactional id, each append is its own
    transaction."""

    def __init__(self, config: Dict[str, str], transactional: bool, timeout: float) -> None:
        self.transactional = transactional
        self.timeout = timeout
        try:
            self._producer: Optional[Producer] = Producer(config)
            if transactional:
                # InitProducerId: fences every older producer of this id and completes or aborts
                # the transaction it left open.
                self._producer.init_transactions(timeout)
            else:
                # A metadata request lets the idempotent producer obtain its id before the first
                # append needs it.
                self._producer.list_topics(timeout=timeout)
        except Exception as e:
            self.close()
            raise failure("open-writer", e) from None

    def append(self, topic: str, partition: int, key: str, value: str) -> int:
        producer = self._producer
        if producer is None:
            raise CapabilityError(OP, "the writer was closed")
        outcome: List[Tuple[Optional[KafkaError], int]] = []

        def delivered(error, message) -> None:
            outcome.append((error, -1 if message is None else message.offset()))

        try:
            if self.transactional:
                producer.begin_transaction()
            producer.produce(topic, value=value, key=key, partition=partition, on_delivery=delivered)
            producer.flush(self.timeout)
            if not outcome:
                raise KafkaException(KafkaError(KafkaError._MSG_TIMED_OUT, "no acknowledgement within the timeout"))
            if outcome[0][0] is not None:
                raise KafkaException(outcome[0][0])
            if self.transactional:
                producer.commit_transaction(self.timeout)
        except BaseException as e:
            reported = failure(OP, e) if isinstance(e, Exception) else None
            aborted = self._abort()
            if reported is None:
                raise
            # A fenced producer's delivery only says "purged"; its abort says why.
            purged = reported.code in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)
            says_why = aborted is not None and (aborted.case == "fenced" or purged)
            raise (aborted if says_why else reported) from None
        return outcome[0][1]

    def _abort(self) -> Optional[CapabilityError]:
        """Aborts the open transaction so the writer can append again; the abort's own failure."""
        if not self.transactional or self._producer is None:
            return None
        try:
            self._producer.abort_transaction(self.timeout)
        except Exception as e:
            return failure(OP, e)
        return None

    def close(self) -> None:
        producer, self._producer = getattr(self, "_producer", None), None
        if producer is not None:
            try:
                producer.purge()
                producer.flush(0)
            except Exception:
                pass

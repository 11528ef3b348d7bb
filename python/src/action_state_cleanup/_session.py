"""`RecoverySession`: one runtime's restore and replay of one data topic, a resource living in
the component instance of its `Cleanup`."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Iterable, Iterator, List, Optional, Tuple, Union

from . import _convert as convert
from ._component import ComponentInstance, ResourceAny, Variant, record
from ._marker_texts import NEVER_JSON, marker_texts
from .errors import InternalError, InvalidMarker
from .model import PartitionProgress, ReplayBatch, ReplayedRecord, Verdict

if TYPE_CHECKING:
    from ._cleanup import Cleanup


class RecoverySession:
    """One runtime's recovery of one data topic, living in the component (`Cleanup.recovery_session`).

    `restore(markers)` applies SPEC §6 (decision table, topic identity, committed boundary, live
    range), captures each partition's end offset and positions the replay; `next_batch`,
    `replay` and `records` then return exactly the records of [requested, captured end), each
    batch one guest call; `snapshot_marker` is the marker for a checkpoint taken now: the
    restored offsets while a replay is unfinished, the live end offsets otherwise. Refusals and
    failures are the typed `CleanupError`s (`BoundaryViolation`, `TopicChanged`,
    `ReplayStalled`, `ReplayRecordInvalid`, `KafkaFailure`, ...); the session stays usable after
    them (e.g. restore from other markers). If the component instance is discarded (a trap, or
    an exception from `on_before_commit` during an apply), the session is lost and every call
    raises `InternalError`. Not thread-safe, like its `Cleanup`.
    """

    def __init__(
        self, cleanup: Cleanup, instance: ComponentInstance, handle: ResourceAny, topic: str, control_topic: Optional[str], tombstones: bool
    ) -> None:
        self.topic = topic
        #: The control topic whose boundary this session enforces (None: standard recovery).
        self.control_topic = control_topic
        self.tombstones = tombstones
        #: Per-partition progress reported by the last batch (empty before the first).
        self.progress: List[PartitionProgress] = []
        self._cleanup = cleanup
        self._instance: Optional[ComponentInstance] = instance
        self._handle: Optional[ResourceAny] = handle
        # Dropped without close: the guest resource is dropped at the Cleanup's next guest call.
        self._finalizer = weakref.finalize(self, cleanup._orphan, instance, handle)

    # --- plumbing ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _live(self) -> Tuple[ComponentInstance, ResourceAny]:
        if self._handle is None or self._instance is None:
            raise ValueError("the recovery session is closed")
        if self._instance is not self._cleanup._instance:
            reason = self._cleanup._lost_reason or "its Cleanup was closed"
            raise InternalError("internal", f"recovery session of {self.topic} is lost: its component instance was discarded because {reason}; start a new session")
        return self._instance, self._handle

    def _method(self, name: str, *args: Any) -> Any:
        instance, handle = self._live()
        outcome = self._cleanup._run(instance, lambda: instance.call("recovery", f"[method]recovery-session.{name}", handle, *args))
        return self._cleanup._answer(outcome)

    # --- the resource's methods ----------------------------------------------------------------

    def restore(self, markers: Iterable[Union[str, bytes]], *, poll_timeout_ms: int = 500, stall_timeout_ms: int = 30_000) -> Verdict:
        """Validates a restore from `markers` (JSON texts of one recovery point, or their UTF-8
        bytes) and positions the replay. Returns the verdict, or raises the refusal
        (`BoundaryViolation`, `RecoveryRefused`, `TopicChanged`, `OffsetsUnavailable`,
        `InvalidMarker`, ...). A poll waits at most `poll_timeout_ms`; the replay fails with
        `ReplayStalled` after `stall_timeout_ms` without progress. A new restore replaces any
        replay in progress.

        Every failure is a failed restore in the component, whose rule then holds (wit/recovery.wit:
        no checkpoint until a restore completes, unless it retried an unfinished replay's
        offsets): marker bytes that are not UTF-8 reach it as a text it refuses
        (`InvalidMarker`), and inputs that cannot reach it at all (a marker that is neither text
        nor bytes, a timeout outside u32) raise their `TypeError` or `ValueError` only after the
        component failed a restore in their place."""
        try:
            texts = marker_texts(markers)
            options = record(
                poll_timeout_ms=convert.u32(poll_timeout_ms, "poll_timeout_ms"),
                stall_timeout_ms=convert.u32(stall_timeout_ms, "stall_timeout_ms"),
            )
        except Exception:
            self._fail_restore()
            raise
        verdict = self._restore(texts, options)
        self.progress = []
        return verdict

    def _restore(self, texts: List[str], options: Any) -> Verdict:
        instance, handle = self._live()
        source = Variant("texts", texts)
        method = "[method]recovery-session.restore"
        tag, value = self._cleanup._run(instance, lambda: instance.call("recovery", method, handle, source, options))
        if tag == "err":
            raise self._cleanup._refused(value)
        return convert.verdict_of(value)

    def _fail_restore(self) -> None:
        """Has the component fail a restore, for inputs the host could not hand over: the runtime
        calling `restore` may already hold that checkpoint's state, so the session must not go
        on checkpointing as if nothing had been restored."""
        options = record(poll_timeout_ms=500, stall_timeout_ms=30_000)
        try:
            self._restore([NEVER_JSON], options)
        except InvalidMarker:
            return
        raise InternalError("internal", "the component accepted a restore from a marker that is not JSON")

    def next_batch(self, max_records: int = 5000) -> ReplayBatch:
        """The next records of the replay (at most `max_records`, one guest call). Empty only
        when `done`: every partition reached its captured end and the topic identity was
        re-checked. Raises `InvalidArgument` without a replay in progress (none restored, or
        the last one is done).

        A failed batch (`ReplayRecordInvalid`, `KafkaFailure`, `ReplayStalled`, `TopicChanged`,
        an interrupt, ...) ends the replay in the component: the records that call had already
        taken from the consumer were never returned, so every further call raises
        `InvalidArgument` ("... restore again") until the next `restore`. Restoring again from
        the same markers replays from the start."""
        host = self._cleanup._host
        host.last_polled = None
        value = self._method("next-batch", convert.u32(max_records, "max_records"))
        # Indices into the records of the consumer's latest poll, which the host still holds:
        # keys and values never crossed into the component.
        held = host.last_polled.last if host.last_polled is not None else []
        records = [ReplayedRecord(held[i].partition, held[i].offset, held[i].key, held[i].value) for i in value.records]
        progress = [PartitionProgress(p.partition, p.position, p.target) for p in value.progress]
        self.progress = progress
        return ReplayBatch(records=records, done=value.done, progress=progress)

    def replay(self, max_records: int = 5000) -> Iterator[ReplayBatch]:
        """Yields the replay's batches (each non-empty, at most `max_records` records) until
        the component reports it done."""
        while True:
            batch = self.next_batch(max_records)
            if batch.records:
                yield batch
            if batch.done:
                return

    def records(self, max_records: int = 5000) -> Iterator[ReplayedRecord]:
        """Yields every replayed record, fetched `max_records` per guest call."""
        for batch in self.replay(max_records):
            yield from batch.records

    def snapshot_marker(self) -> str:
        """The versioned marker (compact JSON) to store in a checkpoint taken now: while a
        restore's replay is unfinished it carries the restored offsets, otherwise the topic's
        live end offsets. Raises `TopicChanged` when the topic was recreated or its partitions
        changed since the session started."""
        return self._method("snapshot-marker")

    # --- lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        """Drops the guest resource (and with it the consumer it owns). Idempotent."""
        if self._handle is None:
            return
        instance, handle = self._instance, self._handle
        self._handle = None
        self._instance = None
        self._finalizer.detach()
        self._cleanup._sessions.discard(self)
        if instance is not None and instance is self._cleanup._instance:
            self._cleanup._run(instance, lambda: instance.drop(handle))

    def __enter__(self) -> "RecoverySession":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"RecoverySession(topic={self.topic!r}, control_topic={self.control_topic!r}, {state})"

"""The `cleanup` component inside wasmtime-py: loading (with a precompiled cache), linking the
imported capabilities to Python callables, and calling exports.

WIT values cross as `wasmtime.component.Record` objects whose attribute names are the WIT field
names (kebab-case), `Variant(tag, payload)` for variants, plain `str` for enums, `None`/value for
options, and the payload itself for results whose ok and err types are distinguishable (what
wasmtime-py calls "untagged"). Conversions to the package's dataclasses live in `__init__`.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from wasmtime import Config, Engine, Store, WasmtimeError
from wasmtime.component import Component, Linker, Record, ResourceAny, ResourceHost, ResourceType, Variant
from wasmtime.component import _types as _wasmtime_types

from . import _kafka, _values
from ._kafka import CapabilityError, KafkaCapabilities

PACKAGE = "action-state:cleanup"
WIT_VERSION = "0.1.0"

#: Largest linear memory a guest may grow to (as in host/src/engine.rs).
GUEST_MEMORY_LIMIT = 512 << 20
#: Wall-clock limit of one guest call, enforced with epochs (host waits count too).
CALL_LIMIT_SECONDS = 3600
EPOCH_TICK_SECONDS = 0.1
#: The host-defined resource type id of `replay-consumer`.
REPLAY_CONSUMER_TYPE = 1


def interface(name: str) -> str:
    return f"{PACKAGE}/{name}@{WIT_VERSION}"


def record(**fields: Any) -> Record:
    """A WIT record value; Python names map to WIT names (`plan_id` -> `plan-id`)."""
    value = Record()
    for name, field in fields.items():
        setattr(value, name.replace("_", "-"), field)
    return value


def field(value: Record, name: str) -> Any:
    return getattr(value, name.replace("_", "-"))


def bundled_component_path() -> Path:
    """The component file shipped inside the package."""
    return Path(__file__).with_name("cleanup.wasm")


# --- value conversion speed -------------------------------------------------------------------


def _memoize_type_queries() -> None:
    """wasmtime-py converts every value through its type object and re-reads the type's shape
    through the C API for each value (a record's fields, an option's payload, a list's element,
    whether a variant is tagged): for a batch of replayed records that is most of the cost.
    A type object describes one immutable component type, so the answer never changes; this
    memoizes it on the object (halves the cost of a replay batch). Values and semantics are
    untouched; skipped when this wasmtime-py does not have these queries."""
    queries = (
        (getattr(_wasmtime_types, "RecordType", None), "fields"),
        (getattr(_wasmtime_types, "OptionType", None), "payload"),
        (getattr(_wasmtime_types, "ListType", None), "element"),
        (getattr(_wasmtime_types, "VariantLikeType", None), "_tagged"),
    )
    for cls, name in queries:
        original = None if cls is None else cls.__dict__.get(name)
        marker = f"_asc_memoized_{name}"
        if original is None or cls.__dict__.get(marker):
            continue
        is_property = isinstance(original, property)
        compute = original.fget if is_property else original
        if not callable(compute):
            continue
        slot = f"_asc_memo_{name}"

        def memoized(self: Any, _compute: Callable[[Any], Any] = compute, _slot: str = slot) -> Any:
            cache = self.__dict__
            if _slot not in cache:
                cache[_slot] = _compute(self)
            return cache[_slot]

        setattr(cls, name, property(memoized, doc=original.__doc__) if is_property else memoized)
        setattr(cls, marker, True)


_memoize_type_queries()
_values.install()


# --- engine, compilation cache, epoch ticker ---------------------------------------------------

_engines: "weakref.WeakSet[Engine]" = weakref.WeakSet()
_ticker_lock = threading.Lock()
_ticker_started = False


def _tick_forever() -> None:
    import time

    while True:
        for engine in list(_engines):
            engine.increment_epoch()
        time.sleep(EPOCH_TICK_SECONDS)


def _start_ticker(engine: Engine) -> None:
    global _ticker_started
    _engines.add(engine)
    with _ticker_lock:
        if not _ticker_started:
            threading.Thread(target=_tick_forever, name="wasm-epoch", daemon=True).start()
            _ticker_started = True


def new_engine() -> Engine:
    config = Config()
    config.wasm_component_model = True
    config.epoch_interruption = True
    engine = Engine(config)
    _start_ticker(engine)
    return engine


def cache_dir() -> Optional[Path]:
    """`$ASC_CACHE_DIR`, else the XDG cache directory (as the Rust host)."""
    if os.environ.get("ASC_CACHE_DIR"):
        return Path(os.environ["ASC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or (os.path.join(os.environ["HOME"], ".cache") if os.environ.get("HOME") else None)
    return Path(base) / "action-state-cleanup" if base else None


def _cache_key(wasm: bytes) -> str:
    digest = hashlib.sha256()
    digest.update(f"wasmtime-py {metadata.version('wasmtime')} component-model epochs\n".encode())
    digest.update(wasm)
    return digest.hexdigest()[:24]


def load_component(engine: Engine, wasm: bytes, name: str = "cleanup") -> Component:
    """Compiles `wasm`, through the precompiled cache when usable. A cache that cannot be read or
    written only costs the compile time; it never fails the load."""
    directory = cache_dir()
    if directory is None:
        return Component(engine, wasm)
    path = directory / f"python-{name}-{_cache_key(wasm)}.cwasm"
    if path.is_file():
        try:
            # Written by `serialize` of the same wasmtime-py version and engine settings (both
            # in the key); wasmtime still checks the header and refuses a mismatch.
            return Component.deserialize_file(engine, str(path))
        except WasmtimeError:
            pass
    component = Component(engine, wasm)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".tmp{os.getpid()}")
        temporary.write_bytes(bytes(component.serialize()))
        os.replace(temporary, path)
    except OSError:
        pass
    return component


class LoadedComponent:
    """One engine and one compiled component, shared by every `Cleanup` in the process."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise FileNotFoundError(f"cleanup component not found at {path}")
        self.path = path
        self.engine = new_engine()
        self.component = load_component(self.engine, path.read_bytes())


_loaded: Dict[str, LoadedComponent] = {}
_loaded_lock = threading.Lock()


def loaded(path: Optional[Path] = None) -> LoadedComponent:
    path = Path(path) if path is not None else bundled_component_path()
    key = str(path.resolve())
    with _loaded_lock:
        if key not in _loaded:
            _loaded[key] = LoadedComponent(path)
        return _loaded[key]


# --- host state and the imported capabilities ------------------------------------------------

BeforeCommit = Callable[[str, List[Record]], None]


class HostState:
    """What the imports of one linker act on: Kafka clients, the operator-events sink and the
    table of replay consumers owned by the guest."""

    def __init__(self, kafka: Optional[KafkaCapabilities], before_commit: Optional[BeforeCommit]) -> None:
        self.kafka = kafka
        self.before_commit = before_commit
        self.consumers: Dict[int, _kafka.ReplayConsumer] = {}
        self.next_rep = 1
        #: A KeyboardInterrupt caught inside a capability, to re-raise after the guest call.
        self.interrupted: Optional[BaseException] = None

    def clients(self, operation: str) -> KafkaCapabilities:
        if self.kafka is None:
            raise CapabilityError(operation, "this Cleanup has no Kafka connection (bootstrap_servers was not given)")
        return self.kafka

    def close_consumers(self) -> None:
        for consumer in self.consumers.values():
            consumer.close()
        self.consumers.clear()


def kafka_error(error: CapabilityError) -> Record:
    return record(operation=error.operation, message=error.message, retriable=bool(error.retriable))


def _capability(host: "HostState", operation: str, call: Callable[[], Any]) -> Any:
    """Runs one capability: its value is the result's ok payload; any failure becomes the WIT
    `kafka-error` record (the err payload), never a trap. A KeyboardInterrupt (which ctypes would
    otherwise swallow inside a callback) fails the capability and is re-raised by the caller
    once the guest has returned."""
    try:
        return _kafka.guarded(operation, call)
    except CapabilityError as e:
        return kafka_error(e)
    except KeyboardInterrupt as interrupt:
        host.interrupted = interrupt
        return kafka_error(CapabilityError(operation, "interrupted by the embedding process", False))


class _FencedAppend:
    """The `fenced` case of `append-error`, carried through `_capability` as a value."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _offsets(values: Sequence[Record]) -> List[Tuple[int, int]]:
    return list(_values.pairs(values, "partition", "offset"))


def _partition_offsets(pairs: Sequence[Tuple[int, int]]) -> List[Record]:
    return [record(partition=p, offset=o) for p, o in pairs]


def build_linker(engine: Engine, host: HostState) -> Linker:
    """Defines every import of world `cleanup` over `host`."""
    linker = Linker(engine)
    with linker.root() as root:
        with root.add_instance(interface("types")):
            pass

        with root.add_instance(interface("kafka-admin")) as admin:

            def describe_topics(_store, topics: List[str]) -> Any:
                def run() -> List[Optional[Record]]:
                    described = host.clients("describe-topics").describe_topics(topics)
                    return [
                        None if d is None else record(topic=topic, topic_id=d.topic_id, partitions=list(d.partitions))
                        for topic, d in zip(topics, described)
                    ]

                return _capability(host, "describe-topics", run)

            def describe_configs(_store, topics: List[str], names: List[str]) -> Any:
                def run() -> List[List[Record]]:
                    rows = host.clients("describe-configs").describe_configs(topics, names)
                    return [[record(name=n, value=v) for n, v in row] for row in rows]

                return _capability(host, "describe-configs", run)

            def create_topic(_store, topic: str, partitions: int, replication_factor: int, configs: List[Record]) -> Any:
                def run() -> bool:
                    values = {c.name: c.value for c in configs if c.value is not None}
                    return host.clients("create-topic").create_topic(topic, partitions, replication_factor, values)

                return _capability(host, "create-topic", run)

            def list_offsets(_store, topic: str, partitions: List[int], spec: str) -> Any:
                def run() -> List[Record]:
                    latest = {"earliest": False, "latest": True}[spec]
                    return _partition_offsets(host.clients("list-offsets").list_offsets(topic, partitions, latest))

                return _capability(host, "list-offsets", run)

            def delete_records(_store, topic: str, before: List[Record]) -> Any:
                def run() -> List[Record]:
                    return _partition_offsets(host.clients("delete-records").delete_records(topic, _offsets(before)))

                return _capability(host, "delete-records", run)

            def inspect_topics(_store, topics: List[str], names: List[str]) -> Any:
                def run() -> List[Optional[Record]]:
                    states = host.clients("inspect-topics").inspect_topics(topics, names)
                    return [
                        None
                        if state is None
                        else record(
                            description=record(topic=topic, topic_id=state[0].topic_id, partitions=list(state[0].partitions)),
                            configs=[record(name=n, value=v) for n, v in state[1]],
                        )
                        for topic, state in zip(topics, states)
                    ]

                return _capability(host, "inspect-topics", run)

            def offset_range(_store, topic: str, partitions: List[int]) -> Any:
                def run() -> List[Record]:
                    ranges = host.clients("offset-range").offset_range(topic, partitions)
                    return [record(partition=p, beginning=b, end=e) for p, b, e in ranges]

                return _capability(host, "offset-range", run)

            admin.add_func("inspect-topics", inspect_topics)
            admin.add_func("offset-range", offset_range)
            admin.add_func("describe-topics", describe_topics)
            admin.add_func("describe-configs", describe_configs)
            admin.add_func("create-topic", create_topic)
            admin.add_func("list-offsets", list_offsets)
            admin.add_func("delete-records", delete_records)

        with root.add_instance(interface("control-log")) as control:

            def read_all(_store, topic: str) -> Any:
                def run() -> List[Record]:
                    entries = host.clients("read-control-log").read_control_log(topic)
                    return [record(offset=o, key=k, value=v) for o, k, v in entries]

                return _capability(host, "read-control-log", run)

            def fence(_store, topic: str) -> Any:
                # result<_, kafka-error>: None is ok, a kafka-error record is err.
                return _capability(host, "fence-control", lambda: host.clients("fence-control").fence_control(topic))

            def append(_store, topic: str, key: str, value: str, fenced: bool) -> Any:
                # result<u64, append-error>, both untagged in wasmtime-py (their cases have
                # distinct Python types): an int is ok, a str is `fenced(string)`, a kafka-error
                # record is `failed(kafka-error)`.
                def run() -> Any:
                    try:
                        return host.clients("append-control").append_control(topic, key, value, bool(fenced))
                    except _kafka.AppendFenced as refused:
                        return _FencedAppend(refused.reason)

                outcome = _capability(host, "append-control", run)
                return outcome.reason if isinstance(outcome, _FencedAppend) else outcome

            control.add_func("read-all", read_all)
            control.add_func("fence", fence)
            control.add_func("append", append)

        with root.add_instance(interface("kafka-consumer")) as consumer:

            def drop_consumer(_store, rep: int) -> None:
                replay = host.consumers.pop(rep, None)
                if replay is not None:
                    replay.close()

            consumer.add_resource("replay-consumer", ResourceType.host(REPLAY_CONSUMER_TYPE), drop_consumer)

            def construct(_store, topic: str) -> ResourceHost:
                # Creating a consumer only fails on invalid configuration, which the first
                # capability call (assign) reports, as in the Rust host.
                try:
                    replay = host.clients("consumer-create").replay_consumer(topic)
                except CapabilityError as e:
                    replay = _BrokenConsumer(e)
                rep = host.next_rep
                host.next_rep += 1
                host.consumers[rep] = replay
                return ResourceHost.own(rep, REPLAY_CONSUMER_TYPE)

            def lookup(store, handle: Any, operation: str) -> _kafka.ReplayConsumer:
                rep = handle.to_host(store).rep
                replay = host.consumers.get(rep)
                if replay is None:
                    raise CapabilityError(operation, f"unknown replay consumer {rep}")
                return replay

            def assign(store, handle: Any, start: List[Record]) -> Any:
                def run() -> None:
                    lookup(store, handle, "consumer-assign").assign(_offsets(start))

                return _capability(host, "consumer-assign", run)

            def poll(store, handle: Any, max_records: int, timeout_ms: int) -> Any:
                def run() -> List[Record]:
                    if host.kafka is not None:
                        host.kafka.count_poll()
                    batch = lookup(store, handle, "consumer-poll").poll(max_records, timeout_ms)
                    return [
                        record(partition=r.partition, offset=r.offset, key=r.key, value=r.value, decode_error=r.decode_error)
                        for r in batch
                    ]

                return _capability(host, "consumer-poll", run)

            def position(store, handle: Any) -> Any:
                def run() -> List[Record]:
                    return _partition_offsets(lookup(store, handle, "consumer-position").position())

                return _capability(host, "consumer-position", run)

            consumer.add_func("[constructor]replay-consumer", construct)
            consumer.add_func("[method]replay-consumer.assign", assign)
            consumer.add_func("[method]replay-consumer.poll", poll)
            consumer.add_func("[method]replay-consumer.position", position)

        with root.add_instance(interface("operator-events")) as events:

            def before_commit(_store, plan_id: str, preview: List[Record]) -> None:
                # An exception from the embedder's callback aborts the apply before COMMITTED
                # (the guest call traps and the exception is re-raised to the caller).
                if host.before_commit is not None:
                    host.before_commit(plan_id, preview)

            events.add_func("before-commit", before_commit)
    return linker


class _BrokenConsumer(_kafka.ReplayConsumer):
    """A consumer whose creation failed: every call reports that failure."""

    def __init__(self, failure: CapabilityError) -> None:  # noqa: D401 - no super().__init__
        self.topic = ""
        self._consumer = None
        self._failure = failure


# --- instances and calls ---------------------------------------------------------------------


class Trap(Exception):
    """The guest trapped (or the runtime failed); the instance is discarded."""


class ComponentInstance:
    """One store and instance of the cleanup component, with cached export handles."""

    def __init__(self, component: LoadedComponent, linker: Linker) -> None:
        self.store = Store(component.engine)
        self.store.set_limits(memory_size=GUEST_MEMORY_LIMIT)
        self.store.set_epoch_deadline(self._ticks())
        self.instance = linker.instantiate(self.store, component.component)
        self._funcs: Dict[Tuple[str, str], Tuple[Any, Optional[bool]]] = {}

    @staticmethod
    def _ticks() -> int:
        return max(1, int(CALL_LIMIT_SECONDS / EPOCH_TICK_SECONDS))

    def func(self, iface: str, name: str) -> Tuple[Any, Optional[bool]]:
        key = (iface, name)
        if key not in self._funcs:
            index = self.instance.get_export_index(self.store, interface(iface))
            if index is None:
                raise Trap(f"the component does not export {interface(iface)}")
            func_index = self.instance.get_export_index(self.store, name, index)
            func = None if func_index is None else self.instance.get_func(self.store, func_index)
            if func is None:
                raise Trap(f"the component does not export {interface(iface)}#{name}")
            result = func.type(self.store).result
            # For result<T, E>: whether wasmtime-py tags the value as Variant('ok'|'err', …).
            tagged = result._tagged() if result is not None and hasattr(result, "err") else None
            self._funcs[key] = (func, tagged)
        return self._funcs[key]

    def call(self, iface: str, name: str, *args: Any) -> Any:
        """Calls an export. For a `result` it returns ("ok", value) or ("err", error variant);
        otherwise the value. A trap raises `Trap` (or the embedder's own exception)."""
        func, tagged = self.func(iface, name)
        self.store.set_epoch_deadline(self._ticks())
        try:
            value = func(self.store, *args)
        except WasmtimeError as e:
            raise Trap(str(e)) from e
        if tagged is None:
            return value
        if tagged:
            return (value.tag, value.payload)
        # Untagged: the err type (cleanup-error) is the only variant.
        if isinstance(value, Variant):
            return ("err", value)
        return ("ok", value)

    def drop(self, resource: ResourceAny) -> None:
        """Drops a guest resource this instance returned (runs the guest's destructor, which
        drops the host resources it owns). A trap raises `Trap`."""
        self.store.set_epoch_deadline(self._ticks())
        try:
            resource.drop(self.store)
        except WasmtimeError as e:
            raise Trap(str(e)) from e

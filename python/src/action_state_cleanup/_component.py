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
import time
import weakref
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from wasmtime import Config, Engine, Store, WasmtimeError
from wasmtime.component import Component, Linker, Record, ResourceAny, ResourceHost, ResourceType, Variant
from wasmtime.component import _types as _wasmtime_types

from . import _snapshot_store, _values
from ._kafka_admin import TopicMetadata
from ._kafka_config import KafkaCapabilities
from ._kafka_consumer import Consumer, Polled
from ._kafka_errors import CapabilityError, failure

PACKAGE = "action-state:cleanup"
WIT_VERSION = "0.3.0"

#: Largest linear memory a guest may grow to (as in host/src/engine.rs).
GUEST_MEMORY_LIMIT = 512 << 20
#: Wall-clock limit of one guest call, enforced with epochs (host waits count too).
CALL_LIMIT_SECONDS = 3600
EPOCH_TICK_SECONDS = 0.1


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

BeforeCommit = Callable[[str, List[Record]], bool]
#: Host-defined resource type ids of `kafka-writer.writer` and `kafka-consumer.consumer`.
WRITER_TYPE, CONSUMER_TYPE = 1, 2


class HostState:
    """What the imports of one linker act on: the Kafka capabilities, the operator-events sink,
    and the writers and consumers the guest owns (by resource rep)."""

    def __init__(self, kafka: Optional[KafkaCapabilities], before_commit: Optional[BeforeCommit]) -> None:
        self.kafka = kafka
        self.before_commit = before_commit
        self.resources: Dict[int, Any] = {}
        self.next_rep = 1
        #: The consumer polled last (a replay batch indexes into its latest poll).
        self.last_polled: Optional[Consumer] = None
        #: The control topic, to count its reads apart from replay polls.
        self.control_topic: Optional[str] = None
        #: A KeyboardInterrupt caught inside a capability, to re-raise after the guest call.
        self.interrupted: Optional[BaseException] = None

    def clients(self, operation: str) -> KafkaCapabilities:
        if self.kafka is None:
            raise CapabilityError(operation, "this Cleanup has no Kafka connection (bootstrap_servers was not given)")
        return self.kafka

    def add(self, resource: Any, type_id: int) -> ResourceHost:
        rep, self.next_rep = self.next_rep, self.next_rep + 1
        self.resources[rep] = resource
        return ResourceHost.own(rep, type_id)

    def get(self, store: Any, handle: Any) -> Any:
        # A handle the guest does not own is a bug in the guest: trap, never a Kafka error.
        return self.resources[handle.to_host(store).rep]

    def drop(self, rep: int) -> None:
        resource = self.resources.pop(rep, None)
        if resource is not None:
            resource.close()

    def close_resources(self) -> None:
        for rep in list(self.resources):
            self.drop(rep)


#: How `clock.sleep-ms` sleeps (a module attribute, so tests can make a host that does not wait).
_sleep = time.sleep


def kafka_error(error: CapabilityError) -> Variant:
    """The WIT `kafka-error` value of a failed capability."""
    return Variant(error.case, record(code=error.code, name=error.name, message=error.message))


def _capability(host: "HostState", operation: str, call: Callable[[], Any]) -> Any:
    """Runs one capability: its value is the result's ok payload; any failure becomes the WIT
    `kafka-error` (the err payload), never a trap. A KeyboardInterrupt (which ctypes would
    otherwise swallow inside a callback) fails the capability and is re-raised by the caller
    once the guest has returned."""
    try:
        return call()
    except KeyboardInterrupt as interrupt:
        host.interrupted = interrupt
        return kafka_error(CapabilityError(operation, "interrupted by the embedding process"))
    except Exception as e:  # noqa: BLE001 - every client failure becomes a kafka-error
        return kafka_error(failure(operation, e))


def _metadata(m: TopicMetadata) -> Record:
    return record(
        topic=m.topic,
        topic_id=m.topic_id,
        partitions=list(m.partitions),
        configs=[record(name=n, value=v) for n, v in m.configs],
        offsets=[record(partition=p, beginning=b, end=e) for p, b, e in m.offsets],
        replication_factor=m.replication_factor,
    )


def _partition_offsets(pairs: Sequence[Tuple[int, int]]) -> List[Record]:
    return [record(partition=p, offset=o) for p, o in pairs]


def polled_batch(records: Sequence[Polled], with_data: bool) -> Record:
    """`kafka-consumer.polled-batch`: the records of one poll column by column, flags as the WIT
    defines them (1 key, 2 value, 4 UTF-8), texts only when the poll asked for data."""
    return record(
        partitions=[r.partition for r in records],
        offsets=[r.offset for r in records],
        # A WIT list<u8> crosses as bytes.
        flags=bytes((1 if r.has_key else 0) | (2 if r.has_value else 0) | (4 if r.utf8 else 0) for r in records),
        keys=[r.key for r in records] if with_data else [],
        values=[r.value for r in records] if with_data else [],
        timestamps=[r.timestamp for r in records] if with_data else [],
    )


def build_linker(engine: Engine, host: HostState) -> Linker:
    """Defines every import of world `cleanup` over `host`."""
    linker = Linker(engine)
    with linker.root() as root:
        with root.add_instance(interface("types")):
            pass

        with root.add_instance(interface("clock")) as clock:
            clock.add_func("now-ms", lambda _store: time.monotonic_ns() // 1_000_000)
            clock.add_func("sleep-ms", lambda _store, ms: _sleep(ms / 1000))
            clock.add_func("operation-timeout-ms", lambda _store: host.kafka.timeout_ms() if host.kafka else 30_000)

        with root.add_instance(interface("kafka-admin")) as admin:

            def describe(_store, topics: List[str], names: List[str], with_offsets: bool) -> Any:
                def run() -> List[Optional[Record]]:
                    found = host.clients("describe").describe(topics, names, with_offsets)
                    return [None if m is None else _metadata(m) for m in found]

                return _capability(host, "describe", run)

            def describe_cluster(_store, names: List[str]) -> Any:
                def run() -> Record:
                    cluster = host.clients("describe-cluster").describe_cluster(names)
                    return record(brokers=list(cluster.brokers), configs=[record(name=n, value=v) for n, v in cluster.configs])

                return _capability(host, "describe-cluster", run)

            def create_topic(_store, topic: str, partitions: int, replication_factor: int, configs: List[Record]) -> Any:
                values = {c.name: c.value for c in configs if c.value is not None}
                return _capability(host, "create-topic", lambda: host.clients("create-topic").create_topic(topic, partitions, replication_factor, values))

            def list_offsets(_store, topic: str, partitions: List[int], spec: str) -> Any:
                return _capability(
                    host, "list-offsets", lambda: _partition_offsets(host.clients("list-offsets").list_offsets(topic, partitions, spec == "latest"))
                )

            def delete_records(_store, topic: str, before: Any) -> Any:
                pairs = list(_values.pairs(before, "partition", "offset"))
                return _capability(host, "delete-records", lambda: _partition_offsets(host.clients("delete-records").delete_records(topic, pairs)))

            admin.add_func("describe", describe)
            admin.add_func("describe-cluster", describe_cluster)
            admin.add_func("create-topic", create_topic)
            admin.add_func("list-offsets", list_offsets)
            admin.add_func("delete-records", delete_records)

        with root.add_instance(interface("kafka-writer")) as writers:
            writers.add_resource("writer", ResourceType.host(WRITER_TYPE), lambda _store, rep: host.drop(rep))

            def open_writer(_store, transactional_id: Optional[str]) -> Any:
                return _capability(host, "open-writer", lambda: host.add(host.clients("open-writer").open_writer(transactional_id), WRITER_TYPE))

            def append(store, handle: Any, topic: str, partition: int, key: str, value: str) -> Any:
                writer = host.get(store, handle)

                def run() -> int:
                    host.clients("append").count("control_writes")
                    return writer.append(topic, partition, key, value)

                return _capability(host, "append", run)

            writers.add_func("[static]writer.open", open_writer)
            writers.add_func("[method]writer.append", append)

        with root.add_instance(interface("kafka-consumer")) as consumers:
            consumers.add_resource("consumer", ResourceType.host(CONSUMER_TYPE), lambda _store, rep: host.drop(rep))

            def open_consumer(_store, topic: str) -> Any:
                return _capability(host, "open-consumer", lambda: host.add(host.clients("open-consumer").open_consumer(topic), CONSUMER_TYPE))

            def assign(store, handle: Any, start: Any) -> Any:
                consumer = host.get(store, handle)
                return _capability(host, "assign", lambda: consumer.assign(list(_values.pairs(start, "partition", "offset"))))

            def position(store, handle: Any) -> Any:
                consumer = host.get(store, handle)
                return _capability(host, "position", lambda: _partition_offsets(consumer.position()))

            def poll(store, handle: Any, max_records: int, timeout_ms: int, with_data: bool) -> Any:
                consumer = host.get(store, handle)

                def run() -> Record:
                    kafka = host.clients("poll")
                    kafka.count("control_reads" if consumer.topic == host.control_topic else "consumer_polls")
                    host.last_polled = consumer
                    return polled_batch(consumer.poll(max_records, timeout_ms), with_data)

                return _capability(host, "poll", run)

            consumers.add_func("[static]consumer.open", open_consumer)
            consumers.add_func("[method]consumer.assign", assign)
            consumers.add_func("[method]consumer.position", position)
            consumers.add_func("[method]consumer.poll", poll)

        with root.add_instance(interface("operator-events")) as events:

            def before_commit(_store, plan_id: str, preview: List[Record], _created: Optional[Record]) -> str:
                # The review's answer (enum `review`): the embedder's callback decides. An
                # exception from it aborts the apply before COMMITTED (the guest call traps and
                # the exception is re-raised to the caller).
                if host.before_commit is not None and not host.before_commit(plan_id, preview):
                    return "decline"
                return "proceed"

            def verified(_store, _plan: Record) -> None:
                # The Python API names the plan in what apply returns or raises; nothing to show.
                return None

            def committed(_store, _plan_id: str) -> None:
                # The Python API reports the outcome when apply returns; nothing to show here.
                return None

            def retrying(_store, _message: str, _remaining_ms: int) -> None:
                # An embedding shows no progress lines: the failure, if any, is raised at the end.
                return None

            events.add_func("verified", verified)
            events.add_func("before-commit", before_commit)
            events.add_func("committed", committed)
            events.add_func("retrying", retrying)

        with root.add_instance(interface("snapshot-store")) as snapshots:
            snapshots.add_func("read", lambda _store, location, max_bytes: _snapshot_store.read(location, max_bytes))
            snapshots.add_func("list-folder", lambda _store, location: _snapshot_store.list_folder(location))
    return linker


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

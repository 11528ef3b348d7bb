"""Fast conversion of long WIT lists between wasmtime-py and Python.

wasmtime-py hands component values over as C `wasmtime_component_val_t` trees and converts them
one value at a time through ctypes objects and foreign calls: a 10,000-partition plan spent about
90% of a `verify` (60 ms) crossing into Python, and more going back in for `render`. This module
replaces wasmtime-py's conversion of lists (installed once per process by `install()`):

* A list of records whose fields are all integers or bools (partition offsets, ranges, previews:
  the long lists of this package) is lifted into a `RecordColumns`: one Python list per field,
  read column by column straight from the C tree with C-level slicing and `map`, no Python object
  per record until someone iterates. Lowered, such a list (a `RecordColumns` or any list of
  objects with those attributes) is packed into Python-owned buffers with `array` and strided
  `memoryview` writes, then deep-copied by wasmtime in one call (`wasmtime_component_vallist_copy`).
* Any other list of integers, bools, strings, enums, untagged options and records of those is
  lifted by reading the C tree directly (no ctypes object per value); lowering keeps
  wasmtime-py's code.

Ownership is exactly wasmtime-py's: a lifted list is freed with one call after reading, a lowered
list is a C value the caller owns. The Python values are the ones wasmtime-py produces (`Record`s
with the WIT field names, `int`, `bool`, `str`, `None`, `bytes` for `list<u8>`), except that the
integer-record lists are `RecordColumns`, a read-only sequence of such `Record`s that compares
equal to the equivalent list. Anything this module cannot convert (other types, values of the
wrong type or range) falls back to wasmtime-py, errors included. The memory layout read and
written is the one the wasmtime-py bindings declare, checked at import: where it differs, nothing
is installed.
"""

from __future__ import annotations

import array
import ctypes
import struct
import sys
from collections.abc import Sequence as SequenceABC
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from wasmtime import _ffi as ffi
from wasmtime.component import Record
from wasmtime.component import _types as wt

Reader = Callable[[int], Any]

_VAL = ffi.wasmtime_component_val_t
_ENTRY = ffi.wasmtime_component_valrecord_entry
_VAL_SIZE = ctypes.sizeof(_VAL)
_ENTRY_SIZE = ctypes.sizeof(_ENTRY)
_ENTRY_VAL = _ENTRY.val.offset
_KIND = {
    name: getattr(ffi, f"WASMTIME_COMPONENT_{name}").value
    for name in ("BOOL", "S8", "U8", "S16", "U16", "S32", "U32", "S64", "U64", "STRING", "LIST", "RECORD", "ENUM", "OPTION")
}

# Memory is read through typed pointers at a fixed non-null base (ctypes refuses to index a null
# pointer): `view[(address - _BASE) // size]` is the value at `address`. Indexing or slicing a
# ctypes pointer is a C-level read, not a foreign call.
_BASE = 8
_C_TYPES = {
    "BOOL": ctypes.c_bool,
    "U8": ctypes.c_uint8,
    "S8": ctypes.c_int8,
    "U16": ctypes.c_uint16,
    "S16": ctypes.c_int16,
    "U32": ctypes.c_uint32,
    "S32": ctypes.c_int32,
    "U64": ctypes.c_uint64,
    "S64": ctypes.c_int64,
}
_VIEWS = {name: ctypes.cast(_BASE, ctypes.POINTER(c_type)) for name, c_type in _C_TYPES.items()}
_SHIFT = {name: ctypes.sizeof(c_type).bit_length() - 1 for name, c_type in _C_TYPES.items()}
_WORDS = _VIEWS["U64"]
_BYTES = _VIEWS["U8"]
_CHARS = ctypes.cast(_BASE, ctypes.POINTER(ctypes.c_char))
#: `array` type codes for packing each integer kind (bools are packed as bytes).
_ARRAY_CODES = {"BOOL": "B", "U8": "B", "S8": "b", "U16": "H", "S16": "h", "U32": "I", "S32": "i", "U64": "Q", "S64": "q"}

# Every C value used here: the kind byte at offset 0 and the payload at offset 8; a string,
# list or record payload is (size, data pointer); a record entry is (name, value).
_LAYOUT_OK = (
    sys.byteorder == "little"
    and ctypes.sizeof(ctypes.c_void_p) == 8
    and _VAL.kind.offset == 0
    and _VAL.of.offset == 8
    and _VAL_SIZE % 8 == 0
    and _ENTRY.name.offset == 0
    and _ENTRY_VAL % 8 == 0
    and _ENTRY_SIZE % 8 == 0
    and all(
        (t.size.offset, t.data.offset) == (0, 8)
        for t in (ffi.wasm_name_t, ffi.wasmtime_component_vallist_t, ffi.wasmtime_component_valrecord_t)
    )
    and all(array.array(code).itemsize == 1 << _SHIFT[name] for name, code in _ARRAY_CODES.items())
)
_VAL_WORDS = _VAL_SIZE // 8


class LayoutError(Exception):
    """A C value did not have the kind or shape its type promises (never expected: a bug)."""


def _expect(found: int, expected: int, what: str) -> None:
    if found != expected:
        raise LayoutError(f"component value {what}: found {found}, expected {expected}")


def _text(address: int) -> str:
    """The `wasm_name_t` at `address` as text."""
    index = (address - _BASE) >> 3
    size = _WORDS[index]
    if size == 0:
        return ""
    start = _WORDS[index + 1] - _BASE
    return _CHARS[start : start + size].decode("utf-8")


class RecordColumns(SequenceABC):
    """A list of records with integer fields, stored as one list per field. Indexing and
    iterating give `wasmtime.component.Record`s as wasmtime-py would; `column(name)` gives one
    field's values in order without building records. Compares equal to a list of equal records."""

    __slots__ = ("names", "columns")

    def __init__(self, names: Sequence[str], columns: Sequence[List[Any]]) -> None:
        self.names = tuple(names)
        self.columns = tuple(columns)
        if len(self.names) != len(self.columns) or len({len(c) for c in self.columns}) > 1:
            raise ValueError("RecordColumns needs one column per name, all of one length")

    def column(self, name: str) -> List[Any]:
        return self.columns[self.names.index(name)]

    def _record(self, values: Sequence[Any]) -> Record:
        value = Record()
        value.__dict__.update(zip(self.names, values))
        return value

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._record(values) for values in zip(*(c[index] for c in self.columns))]
        return self._record([c[index] for c in self.columns])

    def __iter__(self) -> Iterator[Record]:
        for values in zip(*self.columns):
            yield self._record(values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordColumns):
            return self.names == other.names and self.columns == other.columns
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RecordColumns({list(self.names)!r}, {len(self)} records)"


def pairs(values: Any, first: str, second: str) -> Iterator[Tuple[Any, Any]]:
    """(first, second) field pairs of a lifted list of records, whatever its representation."""
    if isinstance(values, RecordColumns):
        return zip(values.column(first), values.column(second))
    return ((getattr(v, first), getattr(v, second)) for v in values)


# --- lifting ----------------------------------------------------------------------------------

_INTEGER_TYPES = {
    wt.Bool: "BOOL",
    wt.U8: "U8",
    wt.S8: "S8",
    wt.U16: "U16",
    wt.S16: "S16",
    wt.U32: "U32",
    wt.S32: "S32",
    wt.U64: "U64",
    wt.S64: "S64",
}


def _integer(ty: Any) -> Optional[str]:
    """The kind name of an integer or bool type, else None."""
    for cls, name in _INTEGER_TYPES.items():
        if isinstance(ty, cls):
            return name
    return None


def reader(ty: Any) -> Optional[Reader]:
    """A function from the address of a C value of type `ty` to its Python value, or None when
    this module does not convert `ty`."""
    integer = _integer(ty)
    if integer is not None:
        kind, view, shift = _KIND[integer], _VIEWS[integer], _SHIFT[integer]

        def read_integer(address: int) -> Any:
            _expect(_BYTES[address - _BASE], kind, "kind")
            return view[(address + 8 - _BASE) >> shift]

        return read_integer
    if isinstance(ty, (wt.String, wt.EnumType)):
        text_kind = _KIND["STRING" if isinstance(ty, wt.String) else "ENUM"]

        def read_text(address: int) -> str:
            _expect(_BYTES[address - _BASE], text_kind, "kind")
            return _text(address + 8)

        return read_text
    if isinstance(ty, wt.OptionType):
        inner = None if ty._tagged() else reader(ty.payload)
        if inner is None:
            return None
        option_kind = _KIND["OPTION"]

        def read_option(address: int) -> Any:
            _expect(_BYTES[address - _BASE], option_kind, "kind")
            boxed = _WORDS[(address + 8 - _BASE) >> 3]
            return None if boxed == 0 else inner(boxed)  # type: ignore[misc]

        return read_option
    if isinstance(ty, wt.RecordType):
        return _record_reader(ty)
    if isinstance(ty, wt.ListType):
        return _list_reader(ty)
    return None


def _record_fields(address: int, count: int) -> int:
    """Checks the record at `address` and returns the address of its entries."""
    index = (address - _BASE) >> 3
    _expect(_BYTES[address - _BASE], _KIND["RECORD"], "kind")
    _expect(_WORDS[index + 1], count, "field count")
    return _WORDS[index + 2]


def _record_reader(ty: Any) -> Optional[Reader]:
    fields = ty.fields
    names = [name for name, _ in fields]
    readers = [reader(field_ty) for _, field_ty in fields]
    if any(r is None for r in readers):
        return None
    steps = [(i * _ENTRY_SIZE + _ENTRY_VAL, r) for i, r in enumerate(readers)]
    count = len(fields)

    def read_record(address: int) -> Record:
        entries = _record_fields(address, count)
        value = Record()
        value.__dict__.update(zip(names, [read(entries + offset) for offset, read in steps]))  # type: ignore[misc]
        return value

    return read_record


def _list_reader(ty: Any) -> Optional[Reader]:
    element = ty.element
    list_kind = _KIND["LIST"]
    if isinstance(element, wt.RecordType):
        columns = _columns_reader(element)
        if columns is not None:
            return columns
    read_element = reader(element)
    if read_element is None:
        return None
    is_bytes = isinstance(element, wt.U8)

    def read_list(address: int) -> Any:
        _expect(_BYTES[address - _BASE], list_kind, "kind")
        index = (address - _BASE) >> 3
        size, data = _WORDS[index + 1], _WORDS[index + 2]
        values = [read_element(data + i * _VAL_SIZE) for i in range(size)]
        return bytes(values) if is_bytes else values

    return read_list


def _columns_reader(record: Any) -> Optional[Reader]:
    """The reader of a list of records whose fields are all integers: a `RecordColumns`."""
    fields = record.fields
    kinds = [_integer(field_ty) for _, field_ty in fields]
    if not fields or None in kinds:
        return None
    names = [name for name, _ in fields]
    count = len(fields)
    # Per field: the payload's offset in the record's entries, its view and index shift.
    specs = [(i * _ENTRY_SIZE + _ENTRY_VAL + 8, _VIEWS[k], _SHIFT[k]) for i, k in enumerate(kinds)]  # type: ignore[index]
    field_kinds = [(i * _ENTRY_SIZE + _ENTRY_VAL, _KIND[k], name) for i, (k, name) in enumerate(zip(kinds, names))]  # type: ignore[index]
    list_kind, record_kind = _KIND["LIST"], _KIND["RECORD"]

    def read_columns(address: int) -> RecordColumns:
        _expect(_BYTES[address - _BASE], list_kind, "kind")
        index = (address - _BASE) >> 3
        size, data = _WORDS[index + 1], _WORDS[index + 2]
        if size == 0:
            return RecordColumns(names, [[] for _ in names])
        # Shape checks: every element is a record of `count` fields; the first record's entries
        # have the expected names and kinds (wasmtime builds every element from one type).
        start = data - _BASE
        _expect(_BYTES[start : start + size * _VAL_SIZE : _VAL_SIZE].count(record_kind), size, "records in list")
        first = (start >> 3) + 1
        _expect(_WORDS[first : first + size * _VAL_WORDS : _VAL_WORDS].count(count), size, "records of the right size")
        entries = _WORDS[first + 1]
        for offset, kind, name in field_kinds:
            _expect(_BYTES[entries + offset - _BASE], kind, f"kind of field {name}")
            if _text(entries + offset - _ENTRY_VAL) != name:
                raise LayoutError(f"record field {_text(entries + offset - _ENTRY_VAL)!r} where {name!r} was expected")
        pointers = _WORDS[first + 1 : first + 1 + size * _VAL_WORDS : _VAL_WORDS]
        columns = []
        for offset, view, shift in specs:
            delta = offset - _BASE
            columns.append(list(map(view.__getitem__, [(p + delta) >> shift for p in pointers])))
        return RecordColumns(names, columns)

    return read_columns


# --- lowering ---------------------------------------------------------------------------------


class _ColumnsPacker:
    """Lowers a list of records with integer fields from columns, without a ctypes call per
    record: fixed parts come from a template, fields are written with strided array stores."""

    def __init__(self, fields: List[Tuple[str, Any]], kinds: List[str]) -> None:
        self.names = [name for name, _ in fields]
        self.kinds = kinds
        encoded = [name.encode("utf-8") for name in self.names]
        self.name_buffer = ctypes.create_string_buffer(b"".join(encoded))
        at = ctypes.addressof(self.name_buffer)
        template = b""
        for name, kind in zip(encoded, kinds):
            entry = struct.pack("<QQB", len(name), at, _KIND[kind])
            template += entry + bytes(_ENTRY_SIZE - len(entry))
            at += len(name)
        self.template = template
        self.block = len(template)
        cell = struct.pack("<BxxxxxxxQ", _KIND["RECORD"], len(fields))
        self.cell = cell + bytes(_VAL_SIZE - len(cell))

    def columns(self, values: Any) -> Optional[List[List[Any]]]:
        if isinstance(values, RecordColumns):
            if list(values.names) != self.names:
                return None
            return list(values.columns)
        try:
            return [[getattr(v, name) for v in values] for name in self.names]
        except AttributeError:
            return None

    def pack(self, values: Any, out: Any) -> bool:
        """Writes `values` as a list into `out` (a `wasmtime_component_val_t`) and returns True;
        returns False and writes nothing when a value is missing or of the wrong type or range
        (wasmtime-py's conversion then reports it as usual)."""
        columns = self.columns(values)
        if columns is None:
            return False
        size = len(columns[0])
        entries = bytearray(self.template * size)
        try:
            for i, (kind, column) in enumerate(zip(self.kinds, columns)):
                if kind == "OPTION":
                    # Only absent options are packed (the template holds `none`).
                    if column.count(None) != size:
                        return False
                    continue
                if kind == "BOOL" and not all(type(v) is bool for v in column):
                    return False
                code, itemsize = _ARRAY_CODES[kind], 1 << _SHIFT[kind]
                view = memoryview(entries).cast(code)
                view[(i * _ENTRY_SIZE + _ENTRY_VAL + 8) // itemsize :: self.block // itemsize] = array.array(code, column)
                view.release()
        except (TypeError, OverflowError, ValueError):
            return False
        entry_buffer = (ctypes.c_char * len(entries)).from_buffer(entries)
        at = ctypes.addressof(entry_buffer)
        cells = bytearray(self.cell * size)
        words = memoryview(cells).cast("Q")
        words[2 :: _VAL_WORDS] = array.array("Q", range(at, at + size * self.block, self.block))
        words.release()
        cell_buffer = (ctypes.c_char * len(cells)).from_buffer(cells)
        source = ffi.wasmtime_component_vallist_t()
        source.size = size
        source.data = ctypes.cast(ctypes.addressof(cell_buffer), ctypes.POINTER(_VAL))
        # A deep copy into memory wasmtime owns: `out` then owns a list like any other.
        ffi.wasmtime_component_vallist_copy(ctypes.byref(out.of.list), ctypes.byref(source))
        out.kind = _KIND["LIST"]
        del entry_buffer, cell_buffer
        return True


def packer(ty: Any) -> Optional[_ColumnsPacker]:
    """The packer of a list type whose elements are records of integer (or bool) fields and
    options (packed only when absent, e.g. the texts of a poll without data), else None."""
    element = ty.element
    if not isinstance(element, wt.RecordType):
        return None
    fields = element.fields
    kinds = [_integer(field_ty) or ("OPTION" if isinstance(field_ty, wt.OptionType) else None) for _, field_ty in fields]
    if not fields or None in kinds:
        return None
    return _ColumnsPacker(fields, kinds)  # type: ignore[arg-type]


# --- installation -----------------------------------------------------------------------------

_MARK = "_asc_fast_lists"


def installed() -> bool:
    """Whether wasmtime-py's list conversion goes through this module."""
    return bool(wt.ListType.__dict__.get(_MARK))


def install() -> None:
    """Routes wasmtime-py's list conversions through this module (once per process; nothing
    when the memory layout is not the expected one)."""
    if installed() or not _LAYOUT_OK:
        return
    original_from_c = wt.ListType.convert_from_c
    original_to_c = wt.ListType.convert_to_c
    original_classes = wt.ListType.add_classes

    def cached(self: Any, slot: str, build: Callable[[Any], Any]) -> Any:
        # A type object describes one immutable type: its reader and packer never change.
        cache = self.__dict__
        if slot not in cache:
            cache[slot] = build(self) or False
        return cache[slot]

    def convert_from_c(self: Any, c: Any) -> Any:
        read = cached(self, "_asc_reader", _list_reader)
        if not read:
            return original_from_c(self, c)
        try:
            return read(ctypes.addressof(c))
        finally:
            # Frees the list and everything below it, as wasmtime-py's conversion does.
            ffi.wasmtime_component_vallist_delete(ctypes.byref(c.of.list))

    def convert_to_c(self: Any, store: Any, val: Any, ptr: Any) -> None:
        pack = cached(self, "_asc_packer", packer)
        if pack and isinstance(val, (list, RecordColumns)) and len(val) and pack.pack(val, ptr.contents):
            return
        if isinstance(val, RecordColumns):
            val = list(val)
        original_to_c(self, store, val, ptr)

    def add_classes(self: Any, classes: Any) -> None:
        # The Python classes a value of this type may have: what tells the cases of an untagged
        # variant apart (a RecordColumns is still distinct from a Record, a str, ...).
        original_classes(self, classes)
        if cached(self, "_asc_packer", packer):
            classes.add(RecordColumns)

    _originals[:] = [original_from_c, original_to_c, original_classes]
    wt.ListType.convert_from_c = convert_from_c
    wt.ListType.convert_to_c = convert_to_c
    wt.ListType.add_classes = add_classes
    setattr(wt.ListType, _MARK, True)


_originals: List[Any] = []


def uninstall() -> None:
    """Restores wasmtime-py's own list conversion (to compare both, e.g. in tests)."""
    if installed():
        wt.ListType.convert_from_c, wt.ListType.convert_to_c, wt.ListType.add_classes = _originals
        delattr(wt.ListType, _MARK)


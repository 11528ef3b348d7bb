"""The `snapshot-store` import: whole objects of Flink snapshots by location. Local paths and
``file://`` URIs are read directly; any other URI (``s3://``, ``gs://``, ``abfss://``,
``hdfs://``…) through fsspec and the implementation the embedder has installed and configured
(s3fs, gcsfs, adlfs, pyarrow's HDFS), so the embedding reads what its platform already reads.
One call is one request; which locations to read is the component's decision."""

from __future__ import annotations

import errno
import os
from typing import Any, List, Tuple

from wasmtime.component import Variant


def _local_path(location: str) -> Any:
    """The local path of a location, or None when it names another store."""
    scheme, sep, rest = location.partition(":")
    if not sep or len(scheme) < 2 or not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
        return location
    if scheme.lower() == "file":
        rest = rest[len("//localhost") :] if rest.startswith("//localhost") else rest
        return "/" + rest.lstrip("/")
    return None


def _error(exception: BaseException, location: str) -> Variant:
    text = f"{location}: {exception}"
    if isinstance(exception, (FileNotFoundError, NotADirectoryError, IsADirectoryError)):
        return Variant("not-found", text)
    if isinstance(exception, PermissionError):
        return Variant("denied", text)
    if isinstance(exception, (ConnectionError, TimeoutError)) or getattr(exception, "errno", None) in (
        errno.ECONNREFUSED,
        errno.EHOSTUNREACH,
        errno.ETIMEDOUT,
    ):
        return Variant("unreachable", text)
    return Variant("failed", text)


def _fsspec(location: str) -> Tuple[Any, str]:
    try:
        import fsspec  # type: ignore[import-not-found]
    except ImportError as e:
        raise _Unsupported(f"reading {location} needs fsspec and its implementation for the scheme (pip install fsspec s3fs…)") from e
    try:
        return fsspec.core.url_to_fs(location)
    except (ImportError, ValueError) as e:
        raise _Unsupported(f"fsspec cannot read {location}: {e}") from e


class _Unsupported(Exception):
    pass


def read(location: str, max_bytes: int) -> Any:
    """The WIT `read`: the bytes (ok) or a `store-error` variant (err)."""
    try:
        path = _local_path(location)
        if path is not None:
            if os.path.isdir(path):
                return Variant("not-found", f"{location} is a directory")
            size = os.path.getsize(path)
            if size > max_bytes:
                return Variant("too-large", size)
            with open(path, "rb") as handle:
                return handle.read()
        fs, inner = _fsspec(location)
        size = fs.size(inner)
        if size is not None and size > max_bytes:
            return Variant("too-large", size)
        with fs.open(inner, "rb") as handle:
            return handle.read()
    except _Unsupported as e:
        return Variant("unsupported", str(e))
    except Exception as e:  # noqa: BLE001 - every store failure becomes a store-error
        return _error(e, location)


def list_folder(location: str) -> Any:
    """The WIT `list-folder`: names one level below (folders end with `/`), or a `store-error`."""
    try:
        path = _local_path(location)
        if path is not None:
            return sorted(name + ("/" if os.path.isdir(os.path.join(path, name)) else "") for name in os.listdir(path))
        fs, inner = _fsspec(location)
        names: List[str] = []
        for entry in fs.ls(inner, detail=True):
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            names.append(name + ("/" if entry.get("type") == "directory" else ""))
        return sorted(names)
    except _Unsupported as e:
        return Variant("unsupported", str(e))
    except Exception as e:  # noqa: BLE001 - every store failure becomes a store-error
        return _error(e, location)

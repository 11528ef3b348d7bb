"""The marker texts a restore hands to the component, including markers it cannot read.

A restore that fails must fail inside the component: only its session applies the rule for a
failed restore (wit/recovery.wit: checkpoints are refused until a restore completes, because the
runtime may already hold the failed checkpoint's state). WIT strings are UTF-8, so marker bytes
that do not decode cannot cross as they are; refusing them here instead would leave the
session's phase as it was (a fresh or live session would then checkpoint the live end offsets).
They cross as a text no JSON parser accepts, and the component refuses it as `invalid-marker`.
"""

from __future__ import annotations

from typing import Iterable, List, Union

#: JSON allows no NUL character anywhere, inside a string or outside one: a text holding one is
#: never a marker, whatever precedes it. Alone, it is the marker of a restore that must fail in
#: the component (`RecoverySession.restore`).
NEVER_JSON = "\0"


def marker_texts(markers: Iterable[Union[str, bytes]]) -> List[str]:
    """`markers` as texts for the component's `restore`: text as it is, bytes decoded as UTF-8.
    Bytes that are not UTF-8 become their decodable beginning followed by a NUL, so the
    component's refusal names the byte offset where the undecodable bytes start. Raises
    `TypeError` for anything that is neither text nor bytes."""
    texts = []
    for marker in markers:
        if isinstance(marker, bytes):
            try:
                marker = marker.decode("utf-8")
            except UnicodeDecodeError as e:
                marker = marker[: e.start].decode("utf-8") + NEVER_JSON
        if not isinstance(marker, str):
            raise TypeError(f"markers must be JSON texts (str or UTF-8 bytes), got {type(marker).__name__}")
        texts.append(marker)
    return texts

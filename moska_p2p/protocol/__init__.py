"""The peer protocol, sans-IO (DESIGN.md, "The protocol"): bytes and decisions in, frames and
events out. No socket and no trio here; ``net`` moves the bytes.

So far: :mod:`.frames`, the signed msgpack framing and the typed field checks every message
handler starts with.
"""

from __future__ import annotations

from .frames import (
    MAX_FRAME,
    MAX_PAYLOAD,
    Field,
    FrameDecoder,
    FrameError,
    check_fields,
    encode_frame,
    open_frame,
    pack,
    require,
    signed_frame,
    unpack,
)

__all__ = [
    "MAX_FRAME",
    "MAX_PAYLOAD",
    "Field",
    "FrameDecoder",
    "FrameError",
    "check_fields",
    "encode_frame",
    "open_frame",
    "pack",
    "require",
    "signed_frame",
    "unpack",
]

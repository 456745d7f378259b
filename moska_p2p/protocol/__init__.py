"""The peer protocol, sans-IO (DESIGN.md, "The protocol"): bytes and decisions in, frames and
events out. No socket and no trio here; ``net`` moves the bytes.

:class:`~.session.PeerSession` is the peer: frames in (:mod:`.intake` checks each), routed by
the stage table (:mod:`.stages`) to the phase that owns the stage (:mod:`.seating`,
:mod:`.shuffling` with :mod:`.deck_phase`, :mod:`.play_phase` with :mod:`.reveals`), outputs
out (:mod:`.verdict`). Around it: :mod:`.frames` and :mod:`.messages` (the bytes),
:mod:`.config` (a table's settings and ids), :mod:`.transcript` (a game's record, checked),
:mod:`.tally` (a session of games) and :mod:`.simulate` (peers in memory, for tests). This
package re-exports only :mod:`.frames`' names; import the rest from its module.
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

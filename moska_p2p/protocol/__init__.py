"""The peer protocol, sans-IO (DESIGN.md, "The protocol"): bytes and decisions in, frames and
events out. No socket and no trio here; ``net`` moves the bytes.

:class:`~.session.PeerSession` is the peer: frames in (:mod:`.intake` checks each), routed by
the stage table (:mod:`.stages`) to the phase that owns the stage (:mod:`.seating`,
:mod:`.shuffling` with :mod:`.deck_phase`, :mod:`.play_phase` with :mod:`.reveals`), outputs
out (:mod:`.verdict`). Around it: :mod:`.frames` and :mod:`.messages` (the bytes),
:mod:`.config` (a table's settings and ids), :mod:`.transcript` (a game's record, checked),
:mod:`.tally` (a session of games) and :mod:`.simulate` (peers in memory, for tests).

``__all__`` is what the other packages use. The frames' names come with the package (every
user reads frames); the others are imported from their module on first use, so that a reader
of frames or settings does not load the session, the deck and its libsodium.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .frames import (
    BEACON,
    GAME_KINDS,
    LENGTH_SIZE,
    MAX_FRAME,
    MAX_PAYLOAD,
    NET_PREFIX,
    PRE_AUTH_MAX_FRAME,
    SESSION_RESULT,
    Field,
    FrameDecoder,
    FrameError,
    Spec,
    check_fields,
    encode_frame,
    open_frame,
    pack,
    require,
    signed_frame,
    unpack,
)

__all__ = [
    "BEACON",
    "CONTACT",
    "DONE",
    "GAME_KINDS",
    "INCOMPLETE",
    "INVALID",
    "LEFT",
    "LENGTH_SIZE",
    "MAGIC",
    "MAX_FRAME",
    "MAX_GAMES",
    "MAX_PAYLOAD",
    "NET_PREFIX",
    "NOT_A_TRANSCRIPT",
    "PRE_AUTH_MAX_FRAME",
    "PROTOCOL_VERSION",
    "RESULT",
    "SESSION_RESULT",
    "STAGES",
    "STOPPED",
    "ConfigError",
    "DeckJob",
    "DeckPhase",
    "Field",
    "Finished",
    "FrameDecoder",
    "FrameError",
    "GameRecord",
    "LocalError",
    "MessageError",
    "Moved",
    "Network",
    "Output",
    "PeerSession",
    "Rejected",
    "Report",
    "Seated",
    "Send",
    "SimulationResult",
    "Spec",
    "Stopped",
    "TableConfig",
    "Tally",
    "TallyError",
    "Tamper",
    "Transcript",
    "TranscriptError",
    "Verdict",
    "check_fields",
    "check_session",
    "contact_split",
    "decided",
    "encode_frame",
    "file_digest",
    "is_session_file",
    "lobby_id",
    "make_peers",
    "next_dealer",
    "open_frame",
    "open_result",
    "pack",
    "parse_payload",
    "read_session_file",
    "read_transcript",
    "relayed_note",
    "require",
    "save_transcripts",
    "session_id",
    "session_of",
    "sign_result",
    "signed_frame",
    "table_id",
    "unpack",
    "verify_transcript",
    "write_session_file",
    "write_transcript",
]

# fmt: off
_NAMES_OF = {  # module -> its names of the surface, imported on first use
    ".abandonment": ("CONTACT",),
    ".config": ("ConfigError", "MAX_GAMES", "PROTOCOL_VERSION", "TableConfig", "lobby_id",
                "session_id", "table_id"),
    ".deck_phase": ("DeckJob", "DeckPhase"),
    ".messages": ("MessageError", "parse_payload"),
    ".session": ("LocalError", "PeerSession"),
    ".simulate": ("Network", "SimulationResult", "Tamper", "make_peers", "save_transcripts"),
    ".stages": ("DONE", "RESULT", "STAGES", "STOPPED"),
    ".tally": ("GameRecord", "Tally", "TallyError", "Transcript", "check_session",
               "contact_split", "decided", "file_digest", "is_session_file", "next_dealer",
               "open_result", "read_session_file", "session_of", "sign_result",
               "write_session_file"),
    ".transcript": ("INCOMPLETE", "INVALID", "MAGIC", "NOT_A_TRANSCRIPT", "Report",
                    "TranscriptError", "read_transcript", "verify_transcript",
                    "write_transcript"),
    ".verdict": ("LEFT", "Finished", "Moved", "Output", "Rejected", "Seated", "Send",
                 "Stopped", "Verdict", "relayed_note"),
}
# fmt: on
_MODULE_OF = {name: module for module, names in _NAMES_OF.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _MODULE_OF:
        return getattr(import_module(_MODULE_OF[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

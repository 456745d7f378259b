"""A club event carried between the members' machines (trio): the director's and the
entrants' network side (:mod:`.carrier`; through a relay, with an invite: :mod:`.relayed`),
each round's tables played with the network node (:mod:`.tables`), the event folder every
member keeps with the check that proves its standings (:mod:`.folder`), the board and the
report drawn from it (:mod:`.results`), and the event's announcement on the LAN while its
entry is open (:mod:`.lan`): ``moska tournament`` and ``moska verify EVENT_FOLDER``. The
rules of the event are the sans-IO :mod:`moska_p2p.tournament`.

``__all__`` is what the command line uses.
"""

from .carrier import DirectorNode, DirectorOptions, EntrantNode, EntrantOptions
from .folder import (
    EVENT_FILE,
    NOT_AN_EVENT,
    VALID,
    EventReport,
    FolderError,
    is_event_folder,
    load,
    take_over,
    verify_event,
)
from .lan import FoundEvent, Pin, find_events, find_running_event
from .results import board_state, event_results, game_transcripts, write_report
from .tables import Seat

__all__ = [
    "EVENT_FILE",
    "NOT_AN_EVENT",
    "VALID",
    "DirectorNode",
    "DirectorOptions",
    "EntrantNode",
    "EntrantOptions",
    "EventReport",
    "FolderError",
    "FoundEvent",
    "Pin",
    "Seat",
    "board_state",
    "event_results",
    "find_events",
    "find_running_event",
    "game_transcripts",
    "is_event_folder",
    "load",
    "take_over",
    "verify_event",
    "write_report",
]

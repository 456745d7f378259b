"""A club event carried between the members' machines (trio): the director's and the
entrants' network side (:mod:`.carrier`), each round's tables played with the network node
(:mod:`.tables`), and the event folder every member keeps with the check that proves its
standings (:mod:`.folder`): ``moska tournament`` and ``moska verify EVENT_FOLDER``. The
rules of the event are the sans-IO :mod:`moska_p2p.tournament`.

``__all__`` is what the command line uses.
"""

from .carrier import DirectorNode, DirectorOptions, EntrantNode, EntrantOptions, standings_lines
from .folder import (
    EVENT_FILE,
    NOT_AN_EVENT,
    VALID,
    EventReport,
    is_event_folder,
    load,
    verify_event,
)
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
    "Seat",
    "is_event_folder",
    "load",
    "standings_lines",
    "verify_event",
]

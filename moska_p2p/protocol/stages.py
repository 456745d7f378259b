"""The stages of a game and what each message kind does in each: one table (h11's way).

``hello → seat → shuffle1 → shuffle2 → play → disclose → result → done``, or ``stopped``
from anywhere, with a verdict (PROTOCOL.md §8.1). A stage is an int, so "before the result"
is ``stage < RESULT``; ``STAGES`` names them for people and for the test vectors.

Each stage belongs to one phase, a small state machine of its own module that moves through
its stages (``advance``: when every peer has done its part) and hands over to the next phase
(``begin``): :mod:`.seating` (hello, seat), :mod:`.shuffling` (shuffle1, shuffle2),
:mod:`.play_phase` (play, disclose, result). The session routes a message by :data:`TABLE`:
for the current stage and the message's kind, one of

- ``APPLY``: the handler runs: the stage's phase's ``on_<kind>``, or the session's own for
  ``wait``, ``leave``, ``verdict`` and ``silent``, which apply in every stage. The handler
  still checks the message's turn and content, and may find it early (a later seat's pass, a
  move for a state not reached yet) or wrong;
- ``WAIT``: the message came early (PROTOCOL.md §8.2, "What makes a message wait"): it stays
  in its sender's queue until the stage moves on;
- ``IGNORE``: nothing to do (a goodbye after the result); it stays in the transcript;
- any other value: the message came too late for this stage, a ``protocol-violation`` naming
  its sender, with this reason (PROTOCOL.md §14.2).

``keys``, ``move`` and ``claim`` wait in every stage but ``play``, after it too: there is no
key owed or move due then, so such a message never applies, and its sender's later messages
(its result) wait behind it until the timeout names it.

The stage moves only along :data:`EDGES`, through :func:`check_edge` (the session's
``enter``): a phase that tried another step would be a bug of this peer, refused before
anything changes.
"""

from __future__ import annotations

from . import messages as m

STAGES = ("hello", "seat", "shuffle1", "shuffle2", "play", "disclose", "result", "done")
HELLO, SEAT, SHUFFLE1, SHUFFLE2, PLAY, DISCLOSE, RESULT, DONE = range(8)
STOPPED = 8

APPLY, WAIT, IGNORE = "apply", "wait", "ignore"

# The phase of each stage (the module that handles its messages and moves it on).
SEATING, SHUFFLING, PLAYING, ENDED = "seating", "shuffling", "playing", "ended"

# Too late: the reasons of the protocol violations.
HELLO_AGAIN = "a second hello"
SEAT_AGAIN = "a second seat secret"
PASS_LATE = "a shuffle pass out of its turn"
NOT_ASKED = "a disclosure nobody asked for"
RESULT_AGAIN = "a second result"

KINDS = (
    m.HELLO, m.SEAT, m.SHUFFLE1, m.SHUFFLE2, m.KEYS, m.MOVE, m.CLAIM, m.DISCLOSE, m.RESULT,
    m.WAIT, m.LEAVE, m.VERDICT, m.SILENT,
)  # fmt: skip
SESSION_KINDS = frozenset({m.WAIT, m.LEAVE, m.VERDICT, m.SILENT})  # the session's own

A, W, I = APPLY, WAIT, IGNORE  # noqa: E741 - one letter each, so that a row fits a line
H, S, P, D, R = HELLO_AGAIN, SEAT_AGAIN, PASS_LATE, NOT_ASKED, RESULT_AGAIN
_ROWS = {
    #          phase      hello seat shuf1 shuf2 keys move claim discl result wait leave vrdct silnt
    HELLO:    (SEATING,   A,    W,   W,    W,    W,   W,   W,    W,    W,     A,   A,    A,      A),
    SEAT:     (SEATING,   H,    A,   W,    W,    W,   W,   W,    W,    W,     A,   A,    A,      A),
    SHUFFLE1: (SHUFFLING, H,    S,   A,    W,    W,   W,   W,    W,    W,     A,   A,    A,      A),
    SHUFFLE2: (SHUFFLING, H,    S,   P,    A,    W,   W,   W,    W,    W,     A,   A,    A,      A),
    PLAY:     (PLAYING,   H,    S,   P,    P,    A,   A,   A,    W,    W,     A,   A,    A,      A),
    DISCLOSE: (PLAYING,   H,    S,   P,    P,    W,   W,   W,    A,    W,     A,   A,    A,      A),
    RESULT:   (PLAYING,   H,    S,   P,    P,    W,   W,   W,    D,    A,     A,   A,    A,      A),
    DONE:     (ENDED,     H,    S,   P,    P,    W,   W,   W,    D,    R,     A,   I,    A,      I),
    STOPPED:  (ENDED,     A,    A,   P,    P,    W,   W,   W,    D,    R,     A,   A,    A,      A),
}  # fmt: skip
# A stopped session takes no frame (``receive`` drops them); its row says what this peer's own
# message does when the session stopped while it was being sent (a modified client convicted
# by its own message, an equivocation found among the frames held before the game id): its
# hello or seat still applies (their handlers check it), what is too late is refused.

del A, W, I, H, S, P, D, R  # the row letters only

PHASE: dict[int, str] = {stage: row[0] for stage, row in _ROWS.items()}
"""The phase that owns each stage (``ENDED``: none, the game is over)."""

TABLE: dict[int, dict[str, str]] = {
    stage: dict(zip(KINDS, row[1:], strict=True)) for stage, row in _ROWS.items()
}
"""Stage -> message kind -> ``APPLY``, ``WAIT``, ``IGNORE`` or the reason it is refused."""


EDGES: dict[int, frozenset[int]] = {
    HELLO: frozenset({SEAT, STOPPED}),
    SEAT: frozenset({SHUFFLE1, STOPPED}),
    SHUFFLE1: frozenset({SHUFFLE2, STOPPED}),
    SHUFFLE2: frozenset({PLAY, STOPPED}),
    PLAY: frozenset({DISCLOSE, STOPPED}),
    DISCLOSE: frozenset({RESULT, STOPPED}),
    RESULT: frozenset({DONE, STOPPED}),
    DONE: frozenset(),
    STOPPED: frozenset(),
}
"""Stage -> the stages it may move to: the line of a whole game, and a stop from any stage
before the end (a verdict). A game that is done or stopped moves no more."""


class EdgeError(Exception):
    """A move between two stages that :data:`EDGES` does not have (a bug of this peer)."""


def name(stage: int) -> str:
    return STAGES[stage] if 0 <= stage < len(STAGES) else "stopped"


def check_edge(current: int, following: int) -> None:
    """Raise :class:`EdgeError` unless the stage may move from ``current`` to ``following``."""
    if following not in EDGES.get(current, frozenset()):
        raise EdgeError(f"no move from stage {name(current)} to {name(following)}")


def rule(stage: int, kind: str) -> str:
    """What a message of ``kind`` does in ``stage`` (see the module docstring)."""
    return TABLE[stage][kind]

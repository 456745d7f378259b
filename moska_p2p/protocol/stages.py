"""The stages of a game, in order (PROTOCOL.md §8.1).

``hello → seat → shuffle1 → shuffle2 → play → disclose → result → done``, or ``stopped``
from anywhere, with a verdict. A stage is an int, so "before the result" is ``stage <
RESULT``; ``STAGES`` names them for people and for the test vectors.
"""

from __future__ import annotations

STAGES = ("hello", "seat", "shuffle1", "shuffle2", "play", "disclose", "result", "done")
HELLO, SEAT, SHUFFLE1, SHUFFLE2, PLAY, DISCLOSE, RESULT, DONE = range(8)
STOPPED = 8

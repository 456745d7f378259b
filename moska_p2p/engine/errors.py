"""The engine's errors: all are ``ValueError`` subclasses, as in python-chess."""

from __future__ import annotations


class IllegalMove(ValueError):
    """A move the rules do not allow now; the message names the reason and the rule.

    The game is unchanged when this is raised.
    """


class HiddenCardError(ValueError):
    """The engine was asked for something that depends on a face it does not know yet."""


class DealError(ValueError):
    """A stacked deal (RULES C4) that does not hold every card of the pack exactly once."""


class RevealError(ValueError):
    """A face given to :meth:`Game.reveal` that contradicts what the engine already knows."""

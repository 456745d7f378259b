"""The package's root exception, and the one error of bad settings.

Every error this package raises on purpose derives from :class:`Error`, so a program that
embeds it can tell them from its own bugs (``except moska_p2p.Error``); each also keeps the
built-in base its callers caught before (a :class:`ConfigError` is a ``ValueError``). This
module imports nothing, so every layer may raise them.
"""

from __future__ import annotations


class Error(Exception):
    """An error of moska-p2p's own making: bad input, a refused peer, a file that will not do
    (never a bug: that is any other exception)."""


class ConfigError(Error, ValueError):
    """Settings that cannot make a game: a table's (its preset, options, players, timeout),
    read from the command line or the network, or the config file's."""

"""The results table of a session of games (RULES M24), printed by every peer at the end of
``moska host --games N`` / ``moska join`` and by ``moska verify`` on the session's folder.

It is made here, above the layers, because it reuses the arena's Wilson interval
(:func:`moska_p2p.arena.stats.wilson_interval`), which the network layer may not import; the
node prints what this returns (``NodeOptions.results``). The same tally gives the same lines
on every peer and in ``verify``: nothing in them depends on who prints them.
"""

from __future__ import annotations

from ..arena.stats import wilson_interval
from ..protocol.tally import Tally


def results_table(tally: Tally) -> list[str]:
    """The session's results, one line per seat: losses, loss rate (over the games with a
    result) with its 95% Wilson interval, forfeits, and how often each player stood
    *korokkeella* (two losses in a row) and became a *poronmuna* (three in a row)."""
    games = tally.decided  # a game stopped over lost contact has no result to rate
    planned = f" of {tally.planned}" if tally.planned else ""
    unresolved = len(tally.games) - games
    note = f" ({unresolved} without a result: contact lost)" if unresolved else ""
    width = max([6, *(len(n) for n in tally.names)])
    lines = [
        f"session results: {len(tally.games)}{planned} games{note}",
        f"  {'seat':>4s}  {'player':{width}s} {'losses':>6s} {'loss rate':>9s}"
        f"  {'95% CI':^15s} {'forfeits':>8s} {'korokkeella':>11s} {'poronmuna':>9s}",
    ]
    for seat, name in enumerate(tally.names):
        losses = tally.losses[seat]
        low, high = wilson_interval(losses, games)
        rate = losses / games if games else 0.0
        lines.append(
            f"  {seat:4d}  {name:{width}s} {losses:6d} {rate:9.1%}  {low:6.1%} - {high:6.1%}"
            f" {tally.forfeits[seat]:8d} {tally.korokkeella[seat]:11d}"
            f" {tally.poronmuna[seat]:9d}"
        )
    return lines

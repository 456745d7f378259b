"""An arena run as a picture (``moska arena --plot FILE``): loss rates and ratings.

Two panels. On the left, each bot's loss rate with its 95% Wilson interval (from
:mod:`.stats`, the same figures as the table) and the par line, 1 / players: the rate of a
bot no better than chance, so an interval wholly left of it is a bot that is better than
chance and one wholly right of it worse. On the right, each bot's OpenSkill rating (mu, with
a band of one sigma) over the games of the run, from :func:`.ratings.trajectory`: where the
ratings part and settle shows how many games the ranking needed.

matplotlib is an optional extra (``pip install 'moska-p2p[plot]'``) imported only here and
only when a plot is drawn; the arena asks :func:`check` before its games start, so a missing
extra or a file name of no known format costs no games. The figure is drawn on matplotlib's
Agg canvas without pyplot (no global backend, no GUI, nothing left open). The output is
deterministic: a fixed SVG hash salt (the ids of clip paths), no date in the metadata, text
kept as text (not as glyphs of whatever font file the machine has), so the same result
draws the same bytes. Every interval is one SVG group with the id ``interval-<n>-<bot>``
(:func:`interval_id`), the par line is ``par`` and bot ``n``'s rating line ``rating-<n>``,
for a reader or a test to find them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from .ratings import trajectory

if TYPE_CHECKING:
    from .arena import ArenaResult

FORMATS = {".svg": "svg", ".png": "png"}
INSTALL = "pip install 'moska-p2p[plot]'"
SIZE = (10.0, 4.5)  # inches
DPI = 100  # a PNG is SIZE * DPI pixels: 1000 x 450
MAX_POINTS = 400  # steps of a rating line drawn at most (an SVG of 10,000 games stays small)
CREATOR = "moska arena --plot (matplotlib)"


class PlotError(ValueError):
    """A plot that cannot be drawn: a file name of no known format, or no matplotlib."""


def plot_format(path: Path) -> str:
    """The format ``path``'s extension names (``svg`` or ``png``); :class:`PlotError` for
    any other."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = " or ".join(FORMATS)
        raise PlotError(f"--plot {path}: name a {known} file (the extension picks the format)")
    return fmt


def check(path: Path) -> str:
    """Refuse a plot before any game is played: an unknown extension, or matplotlib missing
    (with the command that installs it). The format, if all is well."""
    fmt = plot_format(path)
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        raise PlotError(f"--plot needs matplotlib, an optional extra: {INSTALL}") from None
    return fmt


def interval_id(index: int, name: str) -> str:
    """The SVG id of bot ``index``'s interval: the position keeps two names apart that only
    differ in characters an id should not hold (``:``, ``/``, spaces)."""
    return f"interval-{index}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', name).strip('-')}"


def _thin(count: int, limit: int = MAX_POINTS) -> list[int]:
    """At most ``limit`` indices of ``range(count)``, evenly spread, first and last kept."""
    if count <= limit:
        return list(range(count))
    step = (count - 1) / (limit - 1)
    return sorted({round(k * step) for k in range(limit)})


def draw(result: ArenaResult, path: Path) -> None:
    """Draw ``result`` into ``path``, in the format its extension names (see :func:`check`).
    Raises :class:`PlotError` or ``OSError`` (the file cannot be written)."""
    fmt = check(path)
    # The ignores are for type checking without the extra installed (CI may lack it).
    import matplotlib  # type: ignore[import-not-found, unused-ignore]
    from matplotlib.backends.backend_agg import (  # type: ignore[import-not-found, unused-ignore]
        FigureCanvasAgg,
    )
    from matplotlib.figure import Figure  # type: ignore[import-not-found, unused-ignore]

    stats = result.stats
    players = len(result.bots)
    par = 1 / players
    with matplotlib.rc_context(
        {"svg.hashsalt": "moska-arena", "svg.fonttype": "none", "font.size": 9.0}
    ):
        figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        rates, ratings = figure.subplots(1, 2, width_ratios=[1.0, 1.25])
        top = max([par, *(s.ci95[1] for s in stats)])
        for i, s in enumerate(stats):
            y = len(stats) - 1 - i  # the first bot named on top, as in the table
            low, high = s.ci95
            color = f"C{i % 10}"
            nan = float("nan")
            # The bar and its two caps as one line, so the interval is one SVG group.
            rates.plot(
                [low, high, nan, low, low, nan, high, high],
                [y, y, nan, y - 0.15, y + 0.15, nan, y - 0.15, y + 0.15],
                color=color,
                linewidth=2.0,
                gid=interval_id(i, s.name),
            )
            rates.plot([s.loss_rate], [y], "o", color=color, markersize=6)
            rates.annotate(
                f"{s.loss_rate:.1%}  ({s.losses}/{s.games})",
                (s.loss_rate, y),
                xytext=(0, 9),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
            )
        rates.axvline(
            par, linestyle="--", color="0.45", linewidth=1.2, gid="par", label=f"par 1/{players}"
        )
        rates.set_yticks(range(len(stats)), [s.name for s in reversed(stats)])
        rates.set_ylim(-0.6, len(stats) - 0.4)
        rates.set_xlim(0.0, min(1.0, top * 1.15 + 0.02))
        rates.xaxis.set_major_formatter(lambda x, _pos: f"{x:.0%}")
        rates.set_xlabel("loss rate, with its 95% Wilson interval")
        rates.legend(loc="lower right", fontsize=8)
        rates.grid(axis="x", color="0.9")

        path_of = trajectory(result.bots, result.outcomes)
        keep = _thin(len(path_of.games))
        games = [path_of.games[k] for k in keep]
        for i, s in enumerate(stats):
            points = [path_of.points[s.name][k] for k in keep]
            mu = [m for m, _ in points]
            color = f"C{i % 10}"
            ratings.fill_between(
                games,
                [m - sd for m, sd in points],
                [m + sd for m, sd in points],
                color=color,
                alpha=0.15,
                linewidth=0,
            )
            ratings.plot(
                games, mu, color=color, linewidth=1.5, label=s.name, gid=f"rating-{i}"
            )
        ratings.set_xlim(0, max(1, result.games))
        ratings.set_xlabel("games played")
        ratings.set_ylabel("OpenSkill rating: mu, band of one sigma")
        ratings.legend(loc="upper left", fontsize=8)
        ratings.grid(color="0.9")

        figure.suptitle(
            f"{result.preset}, {players} players, {result.games} games (seed {result.seed})"
        )
        metadata: dict[str, str | None] = (
            {"Creator": CREATOR, "Date": None} if fmt == "svg" else {"Software": CREATOR}
        )
        figure.savefig(path, format=fmt, metadata=metadata)

"""What an event leaves to keep and to look at: its report (text, a self-contained HTML page,
an SVG plot) and the state of the standings board while it runs.

Everything here is computed from what the standings are computed from (the entry list and
the rounds' :class:`~.standings.TableResult`), so a report is as checkable as the standings:
whoever holds the event's folder can draw the same one. The board's screen is
:mod:`moska_p2p.ui.board`; this module is the data it shows and stays below the screen.

The report is in English, like a transcript or a text record: a document kept and passed
round the club, not a screen in the reader's language. The HTML page carries its style and
its plot inline and loads nothing (no script, no font, no image from anywhere), so it opens
the same from a USB stick years later; every name in it is escaped, since an entrant chose
its own.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from ..crypto.identity import fingerprint_of
from ..protocol.tally import GameRecord
from .entry import Entrant
from .spec import EventSpec, TournamentError
from .standings import RoundResult, Row, TableResult, digest, standings

PLAYING, DONE, NO_RESULT = "playing", "done", "no result"
TABLE_STATES = (PLAYING, DONE, NO_RESULT)


# ---------------------------------------------------------------------- the running event


@dataclass(frozen=True)
class TableStatus:
    """One table of the round being played, as the board shows it."""

    number: int  # 1, 2, ... within the round
    members: tuple[bytes, ...]  # seat order
    played: int  # games of its session counted so far
    games: int  # games its session plays
    state: str = PLAYING  # PLAYING, DONE (its session result is in) or NO_RESULT

    def __post_init__(self) -> None:
        if self.state not in TABLE_STATES:
            raise TournamentError(f"a table is {' or '.join(TABLE_STATES)}, not {self.state!r}")
        if not 0 <= self.played <= self.games:
            raise TournamentError(f"table {self.number}: {self.played} of {self.games} games")


@dataclass(frozen=True)
class BoardState:
    """What the standings board shows: the standings so far (``rows``, best first, as
    :func:`~.standings.standings` gives them) and the tables of the round now played.

    ``round`` is the round now played (1 to ``spec.rounds``; ``spec.rounds + 1`` is the final
    table; 0 before the first); with ``finished`` the event is over and ``rows`` are its
    final standings.
    """

    spec: EventSpec
    rows: tuple[Row, ...]
    round: int = 0
    tables: tuple[TableStatus, ...] = ()
    finished: bool = False

    def __post_init__(self) -> None:
        last = self.spec.rounds + (1 if self.spec.final_size else 0)
        if not 0 <= self.round <= last:
            raise TournamentError(f"round {self.round} of an event of {last} rounds")
        keys = {row.key for row in self.rows}
        seated = [key for table in self.tables for key in table.members]
        if len(set(seated)) != len(seated) or not set(seated) <= keys:
            raise TournamentError("a table of the board seats an unknown key or a key twice")

    @property
    def at_final(self) -> bool:
        return self.round > self.spec.rounds

    def table_of(self, key: bytes) -> TableStatus | None:
        """The table ``key`` sits at this round (``None``: not seated, or sat out)."""
        for table in self.tables:
            if key in table.members:
                return table
        return None


def tied_by_lot(rows: Sequence[Row]) -> list[bool]:
    """For each row, whether it ties with the row before or after it on everything but the
    lot (losses, *poronmuna*, *korokkeella*, forfeits, games; finalists are never tied, their
    order after the final falls back on their places before it): the board and the report
    mark such rows, so nobody takes an order drawn by lot for one earned."""

    def key(row: Row) -> tuple[object, ...] | None:
        if row.final_points is not None:
            return None
        return (row.points, row.poronmuna, row.korokkeella, row.forfeits, row.games)

    keys = [key(row) for row in rows]
    return [
        k is not None and ((i > 0 and keys[i - 1] == k) or (i + 1 < len(keys) and keys[i + 1] == k))
        for i, k in enumerate(keys)
    ]


def ranks(rows: Sequence[Row]) -> list[str]:
    """The rank shown for each row: its place, or ``"3="`` for every row of a tie (the
    place of the tie's first row)."""
    tied = tied_by_lot(rows)
    shown: list[str] = []
    for i, row in enumerate(rows):
        if tied[i] and i > 0 and tied[i - 1] and _same(rows[i - 1], row):
            shown.append(shown[-1])
        else:
            shown.append(f"{i + 1}=" if tied[i] else str(i + 1))
    return shown


def _same(a: Row, b: Row) -> bool:
    return (a.points, a.poronmuna, a.korokkeella, a.forfeits, a.games) == (
        b.points,
        b.poronmuna,
        b.korokkeella,
        b.forfeits,
        b.games,
    )


# ---------------------------------------------------------------------- the report


@dataclass(frozen=True)
class RoundReport:
    """One round (or the final table) and the standings after it."""

    title: str  # "Round 2", "Final table"
    tables: tuple[TableResult, ...]
    forfeited: tuple[bytes, ...]
    games_per_round: int
    after: tuple[Row, ...]


@dataclass(frozen=True)
class EventReport:
    """An event's results as people keep them: :meth:`text`, :meth:`html`, :meth:`svg`."""

    spec: EventSpec
    entrants: tuple[Entrant, ...]
    event: bytes
    rounds: tuple[RoundReport, ...]
    standings: tuple[Row, ...]
    points: dict[bytes, list[int]]  # losses so far after round 0 (none), 1, 2, ...

    @property
    def digest(self) -> bytes:
        """The final standings' digest (:func:`~.standings.digest`), as published."""
        return digest(self.standings)

    def name(self, key: bytes) -> str:
        for entrant in self.entrants:
            if entrant.key == key:
                return entrant.name
        raise TournamentError(f"{fingerprint_of(key)} is not an entrant of this event")

    def heading(self) -> str:
        spec = self.spec
        text = (
            f"{spec.preset}, {spec.seats_per_table} a table, {_count(spec.rounds, 'round')}"
            f" of {_count(spec.games_per_round, 'game')}"
        )
        if spec.final_size:
            text += (
                f", a final table of the best {spec.final_size}"
                f" ({_count(spec.final_games, 'game')})"
            )
        return text

    def game_text(self, table: TableResult, game: GameRecord) -> str:
        """``game 2: lost by bob`` (the losers named; a forfeit and a game with no result
        said so)."""
        names = " and ".join(self.name(table.members[seat]) for seat in game.losers)
        if game.forfeit and not game.losers:
            outcome = "no result (contact lost, nobody's loss)"
        elif game.forfeit:
            outcome = f"forfeited by {names}"
        elif not game.losers:
            outcome = "a draw, nobody lost"
        else:
            outcome = f"lost by {names}"
        return f"game {game.number}: {outcome}"

    def files(self) -> dict[str, str]:
        """The report as the files an event's folder keeps (name: text); the caller
        writes them."""
        return {"report.txt": self.text(), "report.html": self.html(), "losses.svg": self.svg()}

    # ------------------------------------------------------------------ text

    def text(self) -> str:
        """The whole report as plain text: heading, entrants, every round's tables and
        games and the standings after it, the final standings and their digest."""
        lines = [self.spec.name, self.heading()]
        if self.event:
            lines.append(f"event {self.event.hex()}")
        lines += ["", f"Entrants ({len(self.entrants)})"]
        width = max(len(e.name) for e in self.entrants)
        for entrant in self.entrants:
            lines.append(
                f"  {entrant.name.ljust(width)}  {entrant.plays:<6}  {fingerprint_of(entrant.key)}"
            )
        for report in self.rounds:
            lines += ["", report.title]
            for number, table in enumerate(report.tables, start=1):
                members = ", ".join(self.name(key) for key in table.members)
                lines.append(f"  Table {number}: {members}")
                if table.games is None:
                    lines.append("    no signed session result: nobody scores at this table")
                    continue
                lines += [f"    {self.game_text(table, game)}" for game in table.games]
            if report.forfeited:
                sat_out = ", ".join(self.name(key) for key in report.forfeited)
                lines.append(
                    f"  Sat out at the draw (each forfeits"
                    f" {_count(report.games_per_round, 'game')}): {sat_out}"
                )
            if report.title != FINAL_TITLE:  # after the final: the final standings, below
                lines += ["", f"  Standings after {report.title.lower()}"]
                lines += ["    " + line for line in standings_table(report.after)]
        lines += ["", "Final standings" if self.rounds else "Standings (no round played)"]
        lines += ["  " + line for line in standings_table(self.standings)]
        if any(tied_by_lot(self.standings)):
            lines.append("  = tied: the order between them is by lot")
        lines += ["", f"standings digest {self.digest.hex()}"]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ html

    def html(self) -> str:
        """The report as one HTML page: its style and its plot inline, nothing loaded from
        anywhere, every name escaped."""
        e = html.escape
        out = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(self.spec.name)}</title>",
            f"<style>{CSS}</style></head><body>",
            f"<h1>{e(self.spec.name)}</h1>",
            f"<p>{e(self.heading())}</p>",
        ]
        if self.event:
            out.append(f'<p class="id">event {self.event.hex()}</p>')
        out.append("<h2>Final standings</h2>")
        out.append(_html_table(self.standings))
        if any(tied_by_lot(self.standings)):
            out.append('<p class="note">= tied: the order between them is by lot</p>')
        out.append(f'<p class="id">standings digest {self.digest.hex()}</p>')
        if len(self.rounds) and any(self.points.values()):
            out += ["<h2>Losses round by round</h2>", self.svg()]
        out.append(f"<h2>Entrants ({len(self.entrants)})</h2><table><tr>")
        out.append("<th>name</th><th>plays</th><th>key fingerprint</th></tr>")
        for entrant in self.entrants:
            out.append(
                f"<tr><td>{e(entrant.name)}</td><td>{e(entrant.plays)}</td>"
                f'<td class="id">{fingerprint_of(entrant.key)}</td></tr>'
            )
        out.append("</table>")
        for report in self.rounds:
            out.append(f"<h2>{e(report.title)}</h2>")
            for number, table in enumerate(report.tables, start=1):
                members = ", ".join(e(self.name(key)) for key in table.members)
                out.append(f"<h3>Table {number}: {members}</h3>")
                if table.games is None:
                    out.append(
                        '<p class="note">no signed session result: nobody scores at this table</p>'
                    )
                    continue
                items = "".join(f"<li>{e(self.game_text(table, g))}</li>" for g in table.games)
                out.append(f"<ul>{items}</ul>")
            if report.forfeited:
                sat_out = ", ".join(e(self.name(key)) for key in report.forfeited)
                out.append(
                    f"<p>Sat out at the draw (each forfeits"
                    f" {_count(report.games_per_round, 'game')}): {sat_out}</p>"
                )
            if report.title != FINAL_TITLE:  # after the final: the final standings, above
                out.append(f"<h3>Standings after {e(report.title.lower())}</h3>")
                out.append(_html_table(report.after))
        out.append("</body></html>")
        return "\n".join(out) + "\n"

    # ------------------------------------------------------------------ svg

    def svg(self) -> str:
        """Every entrant's losses so far after each round, one line each, as a small
        standalone SVG (drawn by hand: no plotting library needed). Line ``n`` has the id
        ``points-n`` (``n``: the entrant's place in the entry list)."""
        rounds = max(len(p) for p in self.points.values()) - 1
        top = max(1, max((p[-1] for p in self.points.values()), default=0))
        left, right, upper, lower = 44, 180, 30, 36
        plot_w, plot_h = 520, 280
        width, height = left + plot_w + right, upper + plot_h + lower
        legend_h = upper + 16 * len(self.entrants) + 10
        height = max(height, legend_h)

        def x(step: int) -> float:
            return left + plot_w * step / max(1, rounds)

        def y(points: int) -> float:
            return upper + plot_h - plot_h * points / top

        e = html.escape
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
            f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
            f"<title>{e(self.spec.name)}: losses after each round</title>",
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
            f'<text x="{left}" y="18" font-size="13">{e(self.spec.name)}: losses so far,'
            " round by round (fewer is better)</text>",
        ]
        for tick in _ticks(top):
            out.append(
                f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + plot_w}" y2="{y(tick):.1f}"'
                ' stroke="#dddddd"/>'
                f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick}</text>'
            )
        for step in range(rounds + 1):
            out.append(
                f'<text x="{x(step):.1f}" y="{upper + plot_h + 16}" text-anchor="middle">'
                f"{step}</text>"
            )
        out.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{upper + plot_h + 32}"'
            ' text-anchor="middle">after round</text>'
        )
        for index, entrant in enumerate(self.entrants):
            color = PALETTE[index % len(PALETTE)]
            dash = DASHES[index // len(PALETTE) % len(DASHES)]
            points = " ".join(
                f"{x(step):.1f},{y(p):.1f}" for step, p in enumerate(self.points[entrant.key])
            )
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(
                f'<polyline id="points-{index}" fill="none" stroke="{color}" stroke-width="2"'
                f'{dashed} points="{points}"><title>{e(entrant.name)}</title></polyline>'
            )
            ly = upper + 16 * index + 8
            lx = left + plot_w + 14
            out.append(
                f'<line x1="{lx}" y1="{ly}" x2="{lx + 20}" y2="{ly}" stroke="{color}"'
                f' stroke-width="2"{dashed}/>'
                f'<text x="{lx + 26}" y="{ly + 4}">{e(_cut(entrant.name, 22))}</text>'
            )
        out.append("</svg>")
        return "\n".join(out) + "\n"


FINAL_TITLE = "Final table"
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
DASHES = ("", "6 3", "2 3", "8 3 2 3")
CSS = (
    "body{font-family:sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "th,td{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right}"
    "th:nth-child(2),td:nth-child(2){text-align:left}"
    ".id{font-family:monospace;font-size:.85em;color:#555;text-align:left}"
    ".note,td:last-child{color:#555}td:last-child{text-align:left}"
    "ul{margin:.2em 0 .8em}svg{max-width:100%;height:auto}"
)
COLUMNS = ("#", "name", "losses", "games", "kor.", "por.", "forf.")


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ticks(top: int) -> list[int]:
    """Gridlines at a round step (1, 2, 5, 10, 20, 50...), eight at most."""
    step = 1
    while top / step > 8:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return list(range(0, top + 1, step))


def _cells(rows: Sequence[Row]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The standings as cells: the header and one tuple a row (a "final" column when a
    final table was played, a note of the rounds a table left no result)."""
    final = any(row.final_points is not None for row in rows)
    header = COLUMNS + (("final",) if final else ()) + ("",)
    body = []
    for rank, row in zip(ranks(rows), rows, strict=True):
        cells: tuple[str, ...] = (
            rank,
            row.name,
            str(row.points),
            str(row.games),
            str(row.korokkeella),
            str(row.poronmuna),
            str(row.forfeits),
        )
        if final:
            cells += ("" if row.final_points is None else str(row.final_points),)
        note = "no result in round " + ", ".join(map(str, row.no_result)) if row.no_result else ""
        body.append((*cells, note))
    return header, body


def standings_table(rows: Sequence[Row]) -> list[str]:
    """The standings as aligned text lines (a header, then one line a row)."""
    header, body = _cells(rows)
    widths = [max(len(cells[i]) for cells in (header, *body)) for i in range(len(header))]
    lines = []
    for cells in (header, *body):
        parts = [
            cell.ljust(widths[i]) if i == 1 else cell.rjust(widths[i])
            for i, cell in enumerate(cells[:-1])
        ]
        lines.append(("  ".join(parts) + ("  " + cells[-1] if cells[-1] else "")).rstrip())
    return lines


def _html_table(rows: Sequence[Row]) -> str:
    header, body = _cells(rows)
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    lines = [f"<table><tr>{head}</tr>"]
    for cells in body:
        lines.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def event_report(
    spec: EventSpec,
    entrants: Sequence[Entrant],
    rounds: Sequence[RoundResult],
    final: TableResult | None = None,
    *,
    event: bytes = b"",
) -> EventReport:
    """The report of an event (finished or not) from its entry list's entrants, the results
    of the rounds played so far and the final table, if played; ``event`` is the event's id
    (printed for reference). :class:`TournamentError` if the results do not fit the entry
    (as :func:`~.standings.standings` checks them)."""
    if not entrants:
        raise TournamentError("an event's report needs its entrants")
    if final is not None and len(rounds) != spec.rounds:
        raise TournamentError(
            f"a final table after {len(rounds)} of {spec.rounds} rounds: the rounds come first"
        )
    names = [(e.key, e.name) for e in entrants]
    reports: list[RoundReport] = []
    points: dict[bytes, list[int]] = {e.key: [0] for e in entrants}
    for number in range(1, len(rounds) + 1):
        after = standings(names, rounds[:number])
        result = rounds[number - 1]
        reports.append(
            RoundReport(
                f"Round {number}",
                result.tables,
                result.forfeited,
                result.games_per_round,
                tuple(after),
            )
        )
        for row in after:
            points[row.key].append(row.points)
    rows = standings(names, rounds, final)
    if final is not None:
        reports.append(RoundReport(FINAL_TITLE, (final,), (), spec.final_games, tuple(rows)))
    return EventReport(spec, tuple(entrants), event, tuple(reports), tuple(rows), points)

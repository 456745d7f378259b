"""An event's report: the text, the self-contained HTML page and the SVG plot say who lost
each game of each table, the standings after every round and the final table; a hostile
name is escaped everywhere; the board's state refuses what cannot be."""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import (
    BOT,
    PERSON,
    Entrant,
    EventSpec,
    RoundResult,
    TableResult,
    TournamentError,
    digest,
    standings,
)
from moska_p2p.tournament.report import (
    DONE,
    BoardState,
    TableStatus,
    event_report,
    ranks,
    standings_table,
    tied_by_lot,
)

SPEC = EventSpec(
    "club night", "moska", seats_per_table=3, rounds=2, games_per_round=3,
    final_size=3, final_games=2,
)  # fmt: skip
NAMES = ["alice", "bob", "<script>alert(1)</script>", "dave", "eve", "frank"]


def entrants(names: list[str] = NAMES) -> list[Entrant]:
    return [
        Entrant(Identity.from_seed(bytes([i + 1]) * 32).public_bytes, name,
                BOT if i % 2 else PERSON)
        for i, name in enumerate(names)
    ]  # fmt: skip


def game(number: int, *losers: int, forfeit: bool = False) -> GameRecord:
    gid = hashlib.sha256(bytes([number, *losers])).digest()
    return GameRecord(number, gid, b"" if forfeit else b"s" * 32, losers, forfeit, 0)


def seed(n: int) -> bytes:
    return hashlib.sha256(bytes([n])).digest()


E = entrants()
K = [e.key for e in E]
ROUND1 = RoundResult(
    seed(1),
    (
        TableResult((K[0], K[1], K[2]), (game(1, 1), game(2, 1), game(3, 2, forfeit=True))),
        TableResult((K[3], K[4], K[5]), (game(1, 0), game(2), game(3, forfeit=True))),
    ),
    games_per_round=3,
)
ROUND2 = RoundResult(
    seed(2),
    (TableResult((K[0], K[3], K[5]), (game(1, 0), game(2, 1), game(3, 2))),
     TableResult((K[1], K[2]), None)),
    forfeited=(K[4],),
    games_per_round=3,
)  # fmt: skip
FINAL = TableResult((K[0], K[5], K[3]), (game(1, 2), game(2, 2)))


def test_the_text_says_who_lost_each_game_and_the_standings_after_each_round() -> None:
    report = event_report(SPEC, E, [ROUND1, ROUND2], FINAL, event=b"\x01" * 32)
    text = report.text()
    assert text.startswith("club night\nmoska, 3 a table, 2 rounds of 3 games, a final table")
    assert f"event {'01' * 32}" in text
    round1 = text[text.index("Round 1") : text.index("Round 2")]
    assert "Table 1: alice, bob, <script>alert(1)</script>" in round1
    assert "game 1: lost by bob\n" in round1 and "game 2: lost by bob\n" in round1
    assert "game 3: forfeited by <script>alert(1)</script>" in round1
    assert "game 2: a draw, nobody lost" in round1
    assert "game 3: no result (contact lost, nobody's loss)" in round1
    round2 = text[text.index("Round 2") : text.index("Final table")]
    assert "Table 2: bob, <script>alert(1)</script>\n    no signed session result" in round2
    assert "Sat out at the draw (each forfeits 3 games): eve" in round2
    assert "no result in round 2" in round2
    # The standings after each round are the core's, row for row.
    names = [(e.key, e.name) for e in E]
    after1 = standings(names, [ROUND1])
    assert report.rounds[0].after == tuple(after1)
    assert "\n".join("    " + line for line in standings_table(after1)) in text
    final = text[text.index("Final table") :]
    assert (
        "Table 1: alice, frank, dave\n    game 1: lost by dave\n    game 2: lost by dave" in final
    )
    rows = standings(names, [ROUND1, ROUND2], FINAL)
    assert [r.name for r in report.standings] == [r.name for r in rows]
    assert f"standings digest {digest(rows).hex()}" in text
    # The losses plotted are the standings' after each round.
    assert report.points[K[4]] == [0, 0, 3]  # eve: a draw, no result, then sat round 2 out
    assert report.points[K[1]] == [0, 2, 2]  # bob: no result in round 2


def test_a_standings_table_lines_up_and_marks_a_tie_decided_by_lot() -> None:
    names = [(e.key, e.name) for e in E[:4]]
    tied = RoundResult(
        seed(3),
        (TableResult((K[0], K[1]), (game(1, 0), game(2, 1))),
         TableResult((K[2], K[3]), (game(1, 1), game(2, 1)))),
        games_per_round=2,
    )  # fmt: skip
    rows = standings(names, [tied])
    assert [r.points for r in rows] == [0, 1, 1, 2]
    assert tied_by_lot(rows) == [False, True, True, False]
    assert ranks(rows) == ["1", "2=", "2=", "4"]
    lines = standings_table(rows)
    assert lines[0].split() == ["#", "name", "losses", "games", "kor.", "por.", "forf."]
    assert lines[4].split()[-5:] == ["2", "2", "1", "0", "0"]  # dave lost both: korokkeella
    edge = lines[0].index("losses") + len("losses")  # numbers right-aligned under it
    assert all(line[edge - 1] != " " and line[edge] == " " for line in lines)
    text = event_report(SPEC, E[:4], [tied]).text()
    assert "= tied: the order between them is by lot" in text


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href")]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_html_page_is_self_contained_and_escapes_every_name() -> None:
    page = event_report(SPEC, E, [ROUND1, ROUND2], FINAL).html()
    parsed = _Page()
    parsed.feed(page)
    assert "script" not in parsed.tags  # the hostile name is text, never an element
    assert not parsed.refs and "<link" not in page and "@import" not in page
    assert "url(" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    body = "".join(parsed.text)
    assert "<script>alert(1)</script>" in body  # what a reader sees: the name as typed
    assert "lost by bob" in body and "Standings after round 2" in body
    assert parsed.tags.count("svg") == 1 and parsed.tags.count("style") == 1


def test_the_svg_plots_each_entrants_losses_round_by_round() -> None:
    report = event_report(SPEC, E, [ROUND1, ROUND2])
    svg = report.svg()
    root = ET.fromstring(svg)  # well-formed XML, the hostile name escaped
    ns = "{http://www.w3.org/2000/svg}"
    lines = {line.get("id", ""): line for line in root.iter(f"{ns}polyline")}
    assert sorted(lines) == [f"points-{i}" for i in range(len(E))]
    for index, entrant in enumerate(E):
        line = lines[f"points-{index}"]
        assert line.findtext(f"{ns}title") == entrant.name
        ys = [float(p.split(",")[1]) for p in (line.get("points") or "").split()]
        assert len(ys) == 3  # before round 1, after rounds 1 and 2
        # Higher on the picture (a smaller y) is fewer losses: the order of the y's is the
        # order of the losses.
        losses = report.points[entrant.key]
        assert sorted(range(3), key=lambda i: (-ys[i], i)) == sorted(
            range(3), key=lambda i: (losses[i], i)
        )
    assert report.files() == {
        "report.txt": report.text(), "report.html": report.html(), "losses.svg": svg,
    }  # fmt: skip
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "<script>alert(1)</scr…" in texts  # the legend cuts a long name


def test_the_report_refuses_results_that_do_not_fit_the_entry() -> None:
    stranger = Identity.from_seed(b"\x99" * 32).public_bytes
    bad = RoundResult(seed(1), (TableResult((K[0], stranger), (game(1, 0),)),))
    with pytest.raises(TournamentError, match="not an entrant"):
        event_report(SPEC, E, [bad])
    with pytest.raises(TournamentError, match="the rounds come first"):
        event_report(SPEC, E, [ROUND1], FINAL)
    report = event_report(SPEC, E, [])
    assert "Standings (no round played)" in report.text()
    with pytest.raises(TournamentError, match=re.escape(fingerprint_of(stranger))):
        report.name(stranger)


def test_the_board_state_refuses_what_cannot_be() -> None:
    rows = tuple(standings([(e.key, e.name) for e in E], [ROUND1]))
    table = TableStatus(1, (K[0], K[1], K[2]), 1, 3)
    state = BoardState(SPEC, rows, 2, (table,))
    assert state.table_of(K[1]) == table and state.table_of(K[4]) is None
    assert not state.at_final and BoardState(SPEC, rows, 3).at_final
    with pytest.raises(TournamentError, match="round 4 of an event of 3"):
        BoardState(SPEC, rows, 4)
    with pytest.raises(TournamentError, match="seats an unknown key or a key twice"):
        BoardState(SPEC, rows, 1, (table, TableStatus(2, (K[0], K[3]), 0, 3)))
    with pytest.raises(TournamentError, match="4 of 3 games"):
        TableStatus(1, (K[0],), 4, 3)
    with pytest.raises(TournamentError, match="not 'lost'"):
        TableStatus(1, (K[0],), 3, 3, state="lost")
    assert TableStatus(1, (K[0],), 3, 3, DONE).state == DONE

"""The arena: reproducibility across processes, fair seating, forfeits, unfinished games,
statistics, the command line, saved games replayed."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.arena.arena import ArenaError, bot_seeds, derive_seed, run_arena, seating
from moska_p2p.arena.stats import GameOutcome, rate, tally, wilson_interval
from moska_p2p.bots.api import BaseBot
from moska_p2p.cli import app
from moska_p2p.cli.common import split_bots
from moska_p2p.engine import Move, View, new_game
from moska_p2p.table.local import play_game

FIXTURES = Path(__file__).parent / "fixtures" / "bad_bots.py"
runner = CliRunner()


def fixture(name: str) -> str:
    return f"{FIXTURES}:{name}"


# ---------------------------------------------------------------- reproducibility


def test_results_do_not_depend_on_jobs() -> None:
    bots = ["greedy", "shedder", "random", "random"]
    one = run_arena("moska", bots, 48, seed=5, jobs=1).to_json()
    two = run_arena("moska", bots, 48, seed=5, jobs=2).to_json()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert one["games"] == 48 and "ratings" in one  # three kinds of bot: rated
    other = run_arena("moska", bots, 48, seed=6, jobs=1).to_json()
    assert other["bots"] != one["bots"]  # the seed matters


def test_each_game_is_reproducible_alone() -> None:
    """Outcomes are per game, not per run or chunk: game 9 is the same in a run of 10 games
    (chunks of 1) and of 300 (chunks of 5)."""
    bots = ["greedy", "random"]
    short = run_arena("durak", bots, 10, seed=3).outcomes
    longer = run_arena("durak", bots, 300, seed=3, jobs=2).outcomes
    assert longer[:10] == short


# ------------------------------------------------------------------------ seating


def test_every_bot_holds_every_seat_equally_often() -> None:
    for players in (2, 3, 4, 6):
        seats: Counter[tuple[int, int]] = Counter()
        for index in range(3 * players):
            entries = seating(index, players)
            assert sorted(entries) == list(range(players))  # one seat per bot
            for seat, entry in enumerate(entries):
                seats[entry, seat] += 1
        assert set(seats.values()) == {3}
        assert len(seats) == players * players


def test_games_of_a_group_share_their_deal(tmp_path: Path) -> None:
    run_arena("durak", ["greedy", "random", "random"], 6, seed=2, save_dir=tmp_path)
    games = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("game-*.json"))]
    assert len(games) == 6
    deals = [(tuple(g["deck"]), g["dealer"]) for g in games]
    assert deals[0] == deals[1] == deals[2] and deals[3] == deals[4] == deals[5]
    assert deals[0] != deals[3]
    # Within a group the greedy bot sits at each seat once.
    assert sorted(g["bots"].index("greedy") for g in games[:3]) == [0, 1, 2]


def test_derived_seeds_are_stable_and_distinct() -> None:
    assert derive_seed(1, "deal", 0) == derive_seed(1, "deal", 0)
    assert derive_seed(1, "deal", 0) != derive_seed(2, "deal", 0)
    assert bot_seeds(1, 7, 4) == bot_seeds(1, 7, 4) != bot_seeds(2, 7, 4)
    seeds = {s for i in range(100) for s in bot_seeds(1, i, 6)}
    assert len(seeds) == 600 and all(0 <= s < 2**63 for s in seeds)


# ----------------------------------------------------------------------- forfeits


# A budget times every decision of the bot, its good ones too, in wall time: only the
# sleeper's is short (0.5 s: room for its instant good answers on a busy machine, none for its
# 5 s sleep); a short budget for the others would race the machine's load, not the bot.
@pytest.mark.parametrize(
    ("bot", "budget", "reason"),
    [
        ("Raiser", 30.0, "raised RuntimeError: boom"),
        ("Illegal", 30.0, "answered ('no such move', ()), which is not a legal move"),
        ("Sleeper", 0.5, "ran past its time budget of 0.5 s"),
    ],
)
def test_a_misbehaving_bot_forfeits_and_the_arena_goes_on(
    bot: str, budget: float, reason: str
) -> None:
    spec = fixture(bot)
    result = run_arena("durak", [spec, "random"], 4, seed=1, jobs=2, budget=budget)
    bad, good = result.stats
    assert (bad.games, bad.losses, bad.forfeits) == (4, 4, 4)
    assert bad.forfeit_reasons == Counter({reason: 4})
    assert (good.games, good.losses, good.forfeits) == (4, 0, 0)
    assert result.unfinished == 0
    for outcome in result.outcomes:  # the forfeit came mid-game, at the bad bot's seat
        assert outcome.forfeit == outcome.entries.index(0) and outcome.moves >= 2


def test_bots_with_close_are_closed(tmp_path: Path) -> None:
    log = tmp_path / "closed.txt"
    run_arena("durak", [f"{fixture('Closable')}:log={log}", "random"], 5, seed=1)
    validation = 1  # the bot made once to check its specification
    assert log.read_text().count("closed") == 5 + validation


# --------------------------------------------------------------------- unfinished


def test_games_past_the_move_cap_are_unfinished() -> None:
    result = run_arena("moska", ["random"] * 4, 8, seed=1, max_moves=5)
    assert result.unfinished == 8 and result.unfinished_games == list(range(8))
    (stats,) = result.stats
    assert (stats.games, stats.losses, stats.unfinished) == (0, 0, 8)
    data = result.to_json()
    assert data["unfinished"] == 8 and data["bots"][0]["ci95"] == [0.0, 1.0]


# ---------------------------------------------------------------------- statistics


@pytest.mark.parametrize(
    ("losses", "games", "low", "high"),
    [
        (0, 10, 0.0, 0.27753),
        (1, 10, 0.01788, 0.40415),
        (5, 10, 0.23659, 0.76341),
        (10, 10, 0.72247, 1.0),
        (50, 100, 0.40383, 0.59617),
        (25, 1000, 0.01699, 0.03666),
    ],
)
def test_wilson_interval_matches_known_values(
    losses: int, games: int, low: float, high: float
) -> None:
    got = wilson_interval(losses, games)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_interval_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_tally_counts_seats_of_one_bot_together() -> None:
    bots = ["a", "b", "b"]
    outcomes = [
        GameOutcome(0, (0, 1, 2), (1,), None, "", False, 10),
        GameOutcome(1, (1, 2, 0), (2,), 2, "raised X", False, 4),  # bot a forfeits
        GameOutcome(2, (2, 0, 1), (), None, "", False, 30),  # a draw
        GameOutcome(3, (0, 1, 2), (), None, "stopped", True, 99),
    ]
    a, b = tally(bots, outcomes)
    assert (a.games, a.losses, a.forfeits, a.unfinished) == (3, 1, 1, 1)
    assert (b.seats, b.games, b.losses, b.forfeits) == (2, 6, 1, 0)
    assert a.forfeit_reasons == Counter({"raised X": 1})
    assert a.mean_moves == b.mean_moves == pytest.approx(44 / 3)


def test_ratings_rank_the_usual_loser_last() -> None:
    bots = ["strong", "middle", "weak"]
    outcomes = []
    for i in range(60):
        entries = seating(i, 3)
        loser = entries.index(2 if i % 4 else 1)  # "weak" loses 3 games in 4, "middle" 1
        outcomes.append(GameOutcome(i, entries, (loser,), None, "", False, 9))
    ratings = rate(bots, outcomes)
    assert [r.name for r in ratings][-1] == "weak"
    assert ratings[0].name == "strong"
    assert all(r.sigma < 25 / 3 for r in ratings)


# ------------------------------------------------------------- the runner's views


class _Watcher(BaseBot):
    """A trusted bot that reads its view (so it gets the lazy one) and keeps what it saw."""

    trusted_fast = True

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seen: list[tuple[object, ...]] = []
        self.views: list[View] = []
        self.last_unread = False
        self.last: View | None = None

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        self.last, self.last_unread = view, self.rng.random() >= 0.5
        if not self.last_unread:
            self.seen.append(_snapshot(view))
            self.views.append(view)
        return legal_moves[self.rng.randrange(len(legal_moves))]


def _snapshot(view: View) -> tuple[object, ...]:
    return (
        view.seat, view.decision, view.hand_mask, view.hand_sizes, view.table_codes,
        view.stock_size, view.known_mask, view.discard_mask, view.out, view.room,
        view.attacker, view.defender, len(view.history),
    )  # fmt: skip


def test_a_lazy_view_is_the_snapshot_of_the_decision() -> None:
    game = new_game("moska", players=3, seed=11)
    bots = [_Watcher(seed) for seed in range(3)]
    record = play_game(game, bots, record_moves=True)
    assert not record.unfinished and record.move_count == len(record.moves) > 0
    replay = new_game("moska", players=3, seed=11)
    expected: list[list[tuple[object, ...]]] = [[], [], []]
    for seat, text in record.moves:
        expected[seat].append(_snapshot(replay.view(seat)))
        replay.play(text)
    for seat, bot in enumerate(bots):
        seen = [_freeze(s) for s in bot.seen]
        assert seen and set(seen) <= {_freeze(s) for s in expected[seat]}
        # Read views stay valid snapshots after the game moved on.
        assert [_freeze(_snapshot(v)) for v in bot.views] == seen
    # A view not read during its decision cannot be read after the game (no later state).
    unread = [bot.last for bot in bots if bot.last_unread]
    assert unread
    for view in unread:
        with pytest.raises(AttributeError, match="after the bot's decision"):
            _snapshot(view)  # type: ignore[arg-type]


def _freeze(item: object) -> object:
    if isinstance(item, list | tuple):
        return tuple(_freeze(x) for x in item)
    return item


class _TrustedButWrong(BaseBot):
    """A bot marked trusted (no timer, no list search) that answers nonsense at last."""

    trusted_fast = True

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls = 0

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        self.calls += 1
        return legal_moves[0] if self.calls < 3 else self.answer  # type: ignore[return-value]


@pytest.mark.parametrize("answer", [("kill", (0, 51)), None, (99,), 3.5])
def test_a_trusted_bot_answering_an_illegal_move_forfeits(answer: object) -> None:
    game = new_game("durak", players=2, seed=4)
    record = play_game(game, [_TrustedButWrong(answer), _TrustedButWrong(answer)])
    assert record.forfeit in (0, 1) and record.losers == (record.forfeit,)
    assert record.reason == f"answered {answer!r}, which is not a legal move"
    assert record.move_count == 4 and not game.is_over


# --------------------------------------------------------------------- the command


def test_cli_arena_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    args = ["arena", "--preset", "moska", "--bots", "greedy,shedder,random,random"]
    result = runner.invoke(app, [*args, "--games", "8", "--json", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "loss rate" in result.output and "OpenSkill" in result.output
    data = json.loads(out.read_text())
    assert data["games"] == 8 and data["unfinished"] == 0
    names = [b["name"] for b in data["bots"]]
    assert names == ["greedy", "shedder", "random"]
    for bot in data["bots"]:
        assert {"name", "games", "losses", "loss_rate", "ci95", "forfeits"} <= set(bot)
        low, high = bot["ci95"]
        assert 0 <= low <= bot["loss_rate"] <= high <= 1
    assert sum(b["losses"] for b in data["bots"]) == 8  # one loser a game in moska
    assert {r["name"] for r in data["ratings"]} == set(names)


def test_cli_two_kinds_are_not_rated(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    args = ["arena", "--preset", "durak", "--bots", "greedy,random", "--games", "4"]
    result = runner.invoke(app, [*args, "--json", str(out), "-o", "first_bout_limit=5"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert "ratings" not in data and data["options"]["first_bout_limit"] == "5"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "greedy,nosuch,random,random"], 'unknown bot "nosuch"'),
        (["--bots", "random,random,random,random,random,random,random"], "2 to 6 players"),
        (["--preset", "durak-teams", "--bots", "random,random,random"], "not 3"),
        (["--bots", "random,random", "-o", "no_such=on"], 'no option "no_such"'),
        (["--bots", "random,random", "-o", "deck_kill=maybe"], "cannot be"),
        (["--bots", "random,random", "-o", "deck_kill"], "NAME=VALUE"),
        (["--preset", "chess", "--bots", "random,random"], 'unknown preset "chess"'),
        (["--bots", "tests/nowhere.py:Bot,random"], "does not exist"),
    ],
)
def test_cli_invalid_input_is_a_one_line_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["arena", *args, "--games", "2"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_split_bots_keeps_parameters_with_their_bot() -> None:
    assert split_bots("ismcts:time=0.05,iterations=300,greedy, random") == [
        "ismcts:time=0.05,iterations=300",
        "greedy",
        "random",
    ]


# ------------------------------------------------------------------ save and replay


def test_saved_games_replay(tmp_path: Path) -> None:
    folder = tmp_path / "games"
    bots = f"greedy,random,{fixture('Raiser')}"
    args = ["arena", "--preset", "mustamaija", "--bots", bots, "--games", "6", "--jobs", "2"]
    result = runner.invoke(app, [*args, "--save", str(folder), "--max-moves", "400"])
    assert result.exit_code == 0, result.output
    files = sorted(folder.glob("game-*.json"))
    assert [f.name for f in files] == [f"game-{i:06d}.json" for i in range(6)]
    game = json.loads(files[0].read_text())
    for key in ("preset", "options", "players", "seed", "dealer", "deck", "bots", "moves"):
        assert key in game
    assert game["forfeit"] is not None and game["reason"] == "raised RuntimeError: boom"
    check = runner.invoke(app, ["replay-check", str(folder)])
    assert check.exit_code == 0, check.output
    assert "6 games checked: 6 reproduce, 0 do not" in check.output

    # A tampered result or move is caught.
    clean = run_arena("mustamaija", ["greedy", "random", "random"], 1, save_dir=tmp_path / "c")
    path = tmp_path / "c" / "game-000000.json"
    data = json.loads(path.read_text())
    assert clean.outcomes[0].losers == tuple(data["losers"])
    data["losers"] = [(data["losers"][0] + 1) % 3]
    path.write_text(json.dumps(data))
    check = runner.invoke(app, ["replay-check", str(path)])
    assert check.exit_code == 1 and "losers" in check.output
    data["moves"] = data["moves"][:-1]
    del data["move_count"]
    path.write_text(json.dumps(data))
    check = runner.invoke(app, ["replay-check", str(path)])
    assert check.exit_code == 1 and "end before the game does" in check.output


def test_replay_check_of_nothing_is_an_error(tmp_path: Path) -> None:
    assert runner.invoke(app, ["replay-check", str(tmp_path)]).exit_code == 2
    assert runner.invoke(app, ["replay-check", str(tmp_path / "none")]).exit_code == 2


def test_arena_rejects_bad_numbers() -> None:
    with pytest.raises(ArenaError):
        run_arena("moska", ["random", "random"], 2, jobs=0)
    with pytest.raises(ArenaError):
        run_arena("moska", ["random", "random"], 2, max_moves=0)
    with pytest.raises(ArenaError):
        run_arena("moska", ["random", "random"], 2, budget=0)


def test_fast_built_ins_are_what_load_bot_makes() -> None:
    from moska_p2p.arena.arena import _FAST_BUILTINS
    from moska_p2p.bots.loader import load_bot

    for name, make in _FAST_BUILTINS.items():
        fast, loaded = make(1234), load_bot(name, seed=1234)
        assert type(fast) is type(loaded)
        assert vars(fast).keys() == vars(loaded).keys()
        if hasattr(fast, "rng"):
            assert fast.rng.getstate() == loaded.rng.getstate()  # type: ignore[attr-defined]

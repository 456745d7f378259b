"""The arena through the protocol (``moska arena --p2p``): honest bots give no verdict and no
disagreement, results repeat for a seed whatever ``--jobs``, the n games of a group share one
proven deal, every peer's transcript is saved and verifies, and a cheating seat is named by a
verdict that the tally counts while the arena goes on with the next games.

The engine-only arena and this one deal different decks (the arena's shuffle against the
peers' mental-poker shuffle), so their losers are not compared game by game: the statistics'
shape, their repeatability and the protocol's own figures are.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from moska_p2p.arena.arena import run_arena, seating
from moska_p2p.cli import app
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.frames import open_frame
from moska_p2p.protocol.simulate import Network, Tamper
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.simulate import TamperFactory

runner = CliRunner()


def test_honest_bots_give_no_verdict_and_no_disagreement() -> None:
    result = run_arena("durak", ["greedy", "random"], 2, seed=3, p2p=True)
    data = result.to_json()
    assert data["p2p"] is True and data["games"] == 2 and data["unfinished"] == 0
    assert data["verdicts"] == 0 and data["verdict_games"] == []
    assert data["disagreements"] == 0 and data["disagreement_games"] == []
    for bot in data["bots"]:
        assert bot["verdicts"] == 0 and bot["disagreements"] == 0
        assert bot["games"] == 2 and bot["forfeits"] == 0
    # Durak: one loser a game, or a draw; every game was played move by move.
    assert sum(b["losses"] for b in data["bots"]) <= 2
    assert all(o.moves > 10 and not o.verdict for o in result.outcomes)
    assert [o.entries for o in result.outcomes] == [seating(i, 2) for i in range(2)]


def test_results_repeat_for_a_seed_whatever_jobs() -> None:
    args = ("mustamaija", ["greedy", "random"], 2)
    one = run_arena(*args, seed=9, p2p=True)
    two = run_arena(*args, seed=9, p2p=True, jobs=2)  # two chunks, one per process
    assert json.dumps(one.to_json()) == json.dumps(two.to_json())
    other = run_arena(*args, seed=10, p2p=True)
    assert other.outcomes != one.outcomes


def test_a_group_shares_its_proven_deal_and_every_transcript_verifies(tmp_path: Path) -> None:
    run_arena("durak", ["shedder", "random"], 3, seed=4, p2p=True, save_dir=tmp_path)
    folders = sorted(tmp_path.iterdir())
    assert [f.name for f in folders] == [f"game-{i:06d}" for i in range(3)]
    game_ids = []
    for folder in folders:
        reports = [verify_transcript(path) for path in sorted(folder.glob("*.moska"))]
        assert len(reports) == 2 and all(r.valid and r.verdict is None for r in reports)
        assert len({r.final_state_hash for r in reports}) == 1
        game_ids.append(reports[0].game_id)
    # Games 0 and 1 are one deal with the bots swapped; game 2 begins the next deal.
    assert game_ids[0] == game_ids[1] != game_ids[2]


def _cheat_in(game: int, players: int, bot: int) -> TamperFactory:
    """A tamper factory: in arena game ``game``, the peer seated for bot list entry ``bot``
    sends an illegal move as its first move, validly signed with its own key (a modified
    client); every other game is left alone."""

    def factory(index: int, network: Network) -> Tamper | None:
        if index != game:
            return None
        seat = seating(index, players).index(bot)
        forged: dict[bytes, bytes] = {}

        def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
            cheater = network.sessions[source]
            kind, payload, _ = open_frame(frame[4:])
            if cheater.my_seat != seat or kind != m.MOVE or (forged and frame not in forged):
                return [frame]
            if frame not in forged:
                msg = m.parse_payload(payload)
                before = network.sessions[target].game  # the move is not applied there yet
                assert before is not None
                body = m.to_wire(msg.body)
                body["move"] = "pass" if before.decision == "defend" else "take"
                body["cards"] = []
                forged[frame] = cheater.craft(m.MOVE, body, seq=msg.seq, prev=msg.prev)
            return [forged[frame]]

        return tamper

    return factory


def test_a_cheating_seat_is_named_and_the_arena_goes_on(tmp_path: Path) -> None:
    bots = ["random", "greedy", "shedder"]  # the cheat plays for "greedy" in game 1
    result = run_arena(
        "durak", bots, 3, seed=2, p2p=True, tamper=_cheat_in(1, 3, 1), save_dir=tmp_path
    )
    assert result.games == 3 and result.unfinished == 0
    stopped = result.verdict_games
    assert [o.game for o in stopped] == [1]
    game = stopped[0]
    assert game.verdict == v.ILLEGAL_MOVE
    assert [bots[game.entries[s]] for s in game.named] == ["greedy"]
    assert game.losers == game.named and game.forfeit == game.named[0]
    assert result.disagreement_games == []  # the honest peers agree; the cheat is named
    for o in result.outcomes:
        if o.game != 1:  # the games after the cheat are played as ever
            assert not o.verdict and not o.named and o.forfeit is None and o.moves > 10
    stats = {s.name: s for s in result.stats}
    assert stats["greedy"].named == 1 and stats["greedy"].forfeits == 1
    assert stats["random"].named == stats["shedder"].named == 0
    data = result.to_json()
    assert data["verdicts"] == 1
    assert data["verdict_games"][0]["named"] == ["greedy"]
    assert data["verdict_games"][0]["kind"] == v.ILLEGAL_MOVE
    # The honest peers' transcripts are valid records of the stop, signed verdict included.
    reports = [verify_transcript(p) for p in sorted((tmp_path / "game-000001").glob("*.moska"))]
    assert sum(1 for r in reports if r.valid and r.verdict is not None) >= 2


def test_cli_p2p_adds_the_two_columns(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    args = ["arena", "--preset", "durak", "--bots", "greedy,random", "--games", "2", "--p2p"]
    done = runner.invoke(app, [*args, "--json", str(out), "--quiet", "-o", "first_bout_limit=5"])
    assert done.exit_code == 0, done.output
    assert "through the protocol" in done.output
    assert "verdicts: 0 games stopped; disagreements: 0 games" in done.output
    header = next(line for line in done.output.splitlines() if line.startswith("bot "))
    assert header.split()[-2:] == ["verdicts", "disagreements"]
    data = json.loads(out.read_text())
    assert data["verdicts"] == 0 and data["disagreements"] == 0
    plain = runner.invoke(app, ["arena", "--preset", "durak", "--bots", "greedy,random",
                                "--games", "2", "--quiet"])  # fmt: skip
    assert plain.exit_code == 0 and "disagreements" not in plain.output


def test_a_seat_that_fails_forfeits_as_in_the_engine_only_arena() -> None:
    raiser = f"{Path(__file__).parent / 'fixtures' / 'bad_bots.py'}:Raiser"
    engine_only = run_arena("durak", ["greedy", raiser], 2, seed=1)
    through = run_arena("durak", ["greedy", raiser], 2, seed=1, p2p=True)
    for result in (engine_only, through):
        stats = {s.name: s for s in result.stats}
        assert stats[raiser].forfeits == 2 and stats["greedy"].forfeits == 0
        assert dict(stats[raiser].forfeit_reasons) == {"raised RuntimeError: boom": 2}
    # Its peer left with a signed reason: a forfeit, not a verdict of the protocol.
    assert through.verdict_games == [] and through.disagreement_games == []
    assert all(s.named == 0 for s in through.stats)


def test_cli_p2p_jobs_2_gives_byte_identical_results_and_transcripts(tmp_path: Path) -> None:
    """``moska arena --p2p --jobs 2`` plays its games in two worker processes (each game is
    one chunk here), and its JSON and every peer's saved transcript are byte for byte those
    of ``--jobs 1``: a game's secrets come from its index and the run's seed alone."""
    outputs = {}
    for jobs in (1, 2):
        folder = tmp_path / f"jobs-{jobs}"
        args = ["arena", "--preset", "mustamaija", "--bots", "greedy,random", "--games", "3"]
        args += ["--p2p", "--seed", "5", "--jobs", str(jobs), "--quiet"]
        args += ["--json", str(folder / "result.json"), "--save", str(folder / "games")]
        folder.mkdir()
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        files = sorted((folder / "games").rglob("*.moska"))
        assert len(files) == 3 * 2
        transcripts = {str(f.relative_to(folder)): f.read_bytes() for f in files}
        outputs[jobs] = ((folder / "result.json").read_bytes(), transcripts)
    assert outputs[1] == outputs[2]

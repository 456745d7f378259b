"""Sessions of games (RULES M24), sans-IO: each game its own table id (a frame of game 1 is
refused in game 2), the loser deals the next, the streaks, and the signed session result
checked from the transcripts alone (``protocol/tally.py``)."""

from __future__ import annotations

import dataclasses
import struct
from itertools import pairwise
from pathlib import Path

import pytest
from protocol_harness import all_done, identities, play_out, start

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import ConfigError, TableConfig, session_id, table_id
from moska_p2p.protocol.frames import open_frame, pack, unpack
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.simulate import Network, make_peers
from moska_p2p.protocol.tally import (
    GameRecord,
    Tally,
    TallyError,
    Transcript,
    check_session,
    file_digest,
    next_dealer,
    open_result,
    sign_result,
)
from moska_p2p.protocol.transcript import verify_transcript, write_transcript

GAMES = 3


def _play_session(
    folder: Path,
    *,
    nonce: int = 7,
    games: int = GAMES,
    ids: list[Identity] | None = None,
    stop: int | None = None,
) -> list[Network]:
    """A 2-player Durak session of ``games`` games between in-memory peers, each game's
    settings made from the one before as the node makes them; every peer's transcript of
    game k is written to ``folder/p{i}-g{k}.moska``."""
    ids = ids or identities(2)
    config = TableConfig("durak", 2, bytes([nonce]) * 32, games=games)
    nets: list[Network] = []
    for number in range(1, (stop or games) + 1):
        net = Network(make_peers(config, ids, seed=nonce * 100 + number))
        start(net)
        play_out(net, seed=number)
        assert all_done(net), [s.stage for s in net.sessions]
        for i, s in enumerate(net.sessions):
            write_transcript(folder / f"p{i}-g{number}.moska", s.me, s.config, s.roster,
                             s.transcript)  # fmt: skip
        nets.append(net)
        s = net.sessions[0]
        if number < games:
            assert s.game_id is not None and s.game is not None
            config = config.next_game(s.game_id, s.seats, next_dealer(s.dealer, s.game.loser))
    return nets


def _records(nets: list[Network]) -> list[GameRecord]:
    out = []
    for number, net in enumerate(nets, 1):
        s = net.sessions[0]
        assert s.game_id is not None
        out.append(
            GameRecord(number, s.game_id, bytes.fromhex(s.final_hash), s.losers, False, s.dealer)
        )
    return out


_REPORTS: dict[Path, Transcript] = {}


def _transcripts(folder: Path, owners: tuple[int, ...] = (0, 1)) -> list[Transcript]:
    """Every transcript of the folder (verified once: a replay takes a while)."""
    out = []
    for path in sorted(folder.glob("p*-g*.moska")):
        if int(path.name[1]) in owners:
            if path not in _REPORTS:
                _REPORTS[path] = Transcript(verify_transcript(path), file_digest(path), path.name)
            out.append(_REPORTS[path])
    return out


def _results(folder: Path, nets: list[Network], ids: list[Identity] | None = None) -> list[bytes]:
    ids = ids or identities(2)
    first = nets[0].sessions[0]
    sid = session_id(first.config, first.roster)
    frames = []
    for i, identity in enumerate(ids):
        digests = [file_digest(folder / f"p{i}-g{k}.moska") for k in range(1, len(nets) + 1)]
        frames.append(
            sign_result(identity, sid, first.seats, _records(nets), digests, end="all played")
        )
    return frames


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Network]]:
    folder = tmp_path_factory.mktemp("session")
    return folder, _play_session(folder)


# -------------------------------------------------------------------- game ids and replays


def test_every_game_of_a_session_has_its_own_table_and_game_id(
    session: tuple[Path, list[Network]],
) -> None:
    _, nets = session
    tables = {n.sessions[0].table_id for n in nets}
    games = {n.sessions[0].game_id for n in nets}
    assert len(tables) == len(games) == GAMES
    first = nets[0].sessions[0]
    assert all(
        session_id(n.sessions[0].config, n.sessions[0].roster)
        == table_id(first.config, first.roster)
        for n in nets
    )


def test_a_frame_of_game_1_replayed_into_game_2_is_refused_and_named(
    tmp_path: Path, session: tuple[Path, list[Network]]
) -> None:
    """The cross-game replay attack: every frame peer 0 signed in game 1 (its hello, seat,
    shuffles, moves, result), fed to peer 1's session of game 2 at its start and in the
    middle of its play, is refused as another game's; game 2 goes on and verifies."""
    _, nets = session
    replayed = [f for f in nets[0].sessions[1].transcript if _sender(f) == nets[0].sessions[0].me]
    assert len(replayed) > 10
    second = nets[1].sessions[0].config
    net = Network(make_peers(second, identities(2), seed=4242))
    victim = net.sessions[1]
    start(net)
    for moment in ("start", "play"):
        if moment == "play":
            play_out(net, until=lambda n: len(n.sessions[1].moves) >= 6)
        before = len(victim.transcript)
        for frame in replayed:
            outputs = victim.receive(frame, net.clock)
            reasons = [o.reason for o in outputs if isinstance(o, v.Rejected)]
            assert reasons == ["a frame from another game or table"], (moment, outputs)
            assert not any(isinstance(o, v.Stopped) for o in outputs)
        assert len(victim.transcript) == before
    play_out(net)
    assert all_done(net)
    write_transcript(tmp_path / "g2.moska", victim.me, victim.config, victim.roster,
                     victim.transcript)  # fmt: skip
    assert verify_transcript(tmp_path / "g2.moska").valid


def _sender(frame: bytes) -> bytes:
    _, payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload).sender


# -------------------------------------------------------------------- the loser deals


def test_the_loser_deals_the_next_game_in_the_same_seats(
    session: tuple[Path, list[Network]],
) -> None:
    _, nets = session
    for before, after in pairwise(nets):
        old, new = before.sessions[0], after.sessions[0]
        assert old.game is not None
        assert new.seats == old.seats  # kept from game 1 (drawn there, M2)
        assert new.dealer == next_dealer(old.dealer, old.game.loser)
        assert all(s.dealer == new.dealer and s.seats == new.seats for s in after.sessions)
        assert new.game is not None and not new.game.first_game  # D3: later games


def test_a_draw_keeps_the_dealer_and_later_settings_are_checked() -> None:
    assert next_dealer(1, None) == 1 and next_dealer(1, 0) == 0
    config = TableConfig("durak", 2, bytes(32), games=2)
    keys = [k.public_bytes for k in identities(2)]
    later = config.next_game(bytes(32), keys, 1)
    assert TableConfig.from_wire(later.to_wire()) == later
    assert later.canonical() != config.canonical()
    with pytest.raises(ConfigError, match="only 2 games"):
        later.next_game(bytes(32), keys, 0)
    with pytest.raises(ConfigError, match="dealer"):
        dataclasses.replace(later, dealer=2)
    with pytest.raises(ConfigError, match="draws its seats"):
        dataclasses.replace(config, dealer=0)
    with pytest.raises(ValueError, match="seating does not list"):
        PeerSession(None, later, [keys[0], identities(3)[2].public_bytes])
    # a single game's settings carry no session at all: the wire form is as before
    assert "session" not in TableConfig("durak", 2, bytes(32)).to_wire()


# -------------------------------------------------------------------- streaks


def test_korokkeella_and_poronmuna_are_counted_per_run_of_losses() -> None:
    tally = Tally(["a", "b"], 7)
    losers = [(0,), (0,), (0,), (1,), (), (1,), (1,)]  # a: 3 in a row; b: 1, a draw, 2
    for number, lost in enumerate(losers, 1):
        tally.record(GameRecord(number, bytes(32), b"", lost, number == 7, 0))
    assert tally.losses == [3, 3]
    assert tally.forfeits == [0, 1]
    assert tally.korokkeella == [1, 1]
    assert tally.poronmuna == [1, 0]
    assert tally.score_line() == "after game 7 of 7: a 3 losses; b 3 losses (korokkeella)"
    with pytest.raises(TallyError, match="game 9 counted after 7"):
        tally.record(GameRecord(9, bytes(32), b"", (), False, 0))


def test_a_game_stopped_over_lost_contact_is_counted_without_a_result() -> None:
    """Nobody lost it, and the loss rates are over the games with a result."""
    from moska_p2p.cli.results import results_table

    tally = Tally(["a", "b"], 5)
    tally.record(GameRecord(1, bytes(32), b"\x01", (0,), False, 0))
    tally.record(GameRecord(2, bytes(32), b"", (), True, 0))  # stopped: lost contact
    assert tally.losses == [1, 0] and tally.forfeits == [0, 0] and tally.decided == 1
    lines = results_table(tally)
    assert lines[0] == "session results: 2 of 5 games (1 without a result: contact lost)"
    assert "100.0%" in lines[2] and "  0.0%" in lines[3], lines


def test_the_pedestal_note_names_who_lost_the_last_two_games_only() -> None:
    """M24's custom is said at "next game?"; the signed length is never extended."""
    tally = Tally(["ann", "bob", "cid"], 5)
    notes = []
    for number, lost in enumerate([(0,), (0,), (0,), (1,), (1,)], 1):
        tally.record(GameRecord(number, bytes(32), b"", lost, False, 0))
        notes.append(tally.pedestal_note())
    assert notes == [
        None,
        "ann stands korokkeella: by custom another game is played.",
        None,  # three in a row: a reindeer's egg, off the pedestal
        None,
        "bob stands korokkeella: by custom another game is played.",
    ]
    assert tally.planned == 5 and len(tally.games) == 5


# -------------------------------------------------------------------- the signed result


def test_a_signed_session_verifies_from_its_transcripts(
    session: tuple[Path, list[Network]],
) -> None:
    folder, nets = session
    results = _results(folder, nets)
    check = check_session(_transcripts(folder), results)
    assert check.fault is None, check.fault
    assert check.tally is not None and check.results == 2
    losses = [0, 0]
    for net in nets:
        for seat in net.sessions[0].losers:
            losses[seat] += 1
    assert check.tally.losses == losses
    assert check.tally.names == [
        nets[0].sessions[0].peers[k].name for k in nets[0].sessions[0].seats
    ]
    # one peer's transcripts alone, with everyone's signed results, verify too
    assert check_session(_transcripts(folder, (1,)), results).fault is None


def test_a_forged_signature_fails(session: tuple[Path, list[Network]]) -> None:
    folder, nets = session
    results = _results(folder, nets)
    forged = results[1][:-1] + bytes([results[1][-1] ^ 1])
    check = check_session(_transcripts(folder), [results[0], forged])
    assert check.fault is not None and check.fault.startswith("a forged signature on the session")
    with pytest.raises(TallyError, match="forged"):
        open_result(forged)


def test_a_missing_signature_fails(session: tuple[Path, list[Network]]) -> None:
    folder, nets = session
    results = _results(folder, nets)
    missing = identities(2)[1].fingerprint
    check = check_session(_transcripts(folder), results[:1])
    assert check.fault == f"the session result lacks the signature of {missing}"
    assert check_session(_transcripts(folder), []).fault == (
        "no signed session result (no session file of any peer)"
    )


def test_records_that_decide_a_game_differently_are_a_fault_that_says_how(
    session: tuple[Path, list[Network]],
) -> None:
    """Two records of one game that both decide it must agree; the fault says
    what each says. A record of lost contact says less and agrees with either."""
    folder, nets = session
    results = _results(folder, nets)
    every = _transcripts(folder)
    first, second = (t for t in every if "-g1." in t.name)
    other = 1 - first.report.losers[0] if first.report.losers else 0
    lying = dataclasses.replace(second.report, losers=[other])
    rest = [t for t in every if "-g1." not in t.name]
    check = check_session([first, Transcript(lying, second.digest, second.name), *rest], results)
    assert check.fault is not None and "disagree on the game" in check.fault, check.fault
    assert f"lost: seats [{other}]" in check.fault and f"lost: seats {first.report.losers}" in (
        check.fault
    )
    silent = dataclasses.replace(
        second.report,
        verdict="timeout: ...",
        verdict_kind=v.TIMEOUT,
        culprits=(first.report.owner_key,),
        conviction=False,
        losers=[],
        final_state_hash=None,
    )
    mixed = [first, Transcript(silent, second.digest, second.name), *rest]
    assert check_session(mixed, results).fault is None


def test_a_dropped_game_fails(tmp_path: Path, session: tuple[Path, list[Network]]) -> None:
    folder, nets = session
    results = _results(folder, nets)
    every = _transcripts(folder)
    middle = [t for t in every if "-g2." not in t.name]
    assert check_session(middle, results).fault == (
        "game 2 of the session is missing (no transcript of it)"
    )
    last = [t for t in every if "-g3." not in t.name]
    assert check_session(last, results).fault == (
        "the session result lists 3 games, the transcripts hold 2 (missing: game 3)"
    )


def test_a_swapped_game_fails(tmp_path: Path, session: tuple[Path, list[Network]]) -> None:
    """Game 1 of another session of the same players (it verifies on its own) put in the
    place of this session's game 1; and a transcript that is not the one its owner signed."""
    folder, nets = session
    results = _results(folder, nets)
    other = tmp_path / "other"
    other.mkdir()
    _play_session(other, nonce=9, stop=1)  # game 1 of another session of theirs
    swapped = [t for t in _transcripts(folder) if "-g1." not in t.name] + _transcripts(other)
    assert check_session(swapped, results).fault == "the transcripts are not of one session"
    # a file that is not the one its owner signed (its hash differs)
    replaced = [
        Transcript(t.report, b"\x00" * 32, t.name) if t.name == "p0-g2.moska" else t
        for t in _transcripts(folder)
    ]
    fault = check_session(replaced, results).fault
    assert fault == (
        f"p0-g2.moska is not the transcript of game 2 that {identities(2)[0].fingerprint} signed"
    )


def test_a_reordered_session_fails(tmp_path: Path, session: tuple[Path, list[Network]]) -> None:
    """Games out of order: a result that lists them in another order, and a transcript whose
    header claims another place in the session (its hellos then disagree with it)."""
    folder, nets = session
    records = _records(nets)
    first = nets[0].sessions[0]
    sid = session_id(first.config, first.roster)
    reordered = []
    for i, identity in enumerate(identities(2)):
        digests = [file_digest(folder / f"p{i}-g{k}.moska") for k in (1, 3, 2)]
        games = [records[0], records[2], records[1]]
        reordered.append(sign_result(identity, sid, first.seats, games, digests))
    fault = check_session(_transcripts(folder), reordered).fault
    assert fault == "game 2 is not the game the session result signed (swapped or reordered)"
    # the transcript of game 3 with a header that says it is game 2
    path = folder / "p0-g3.moska"
    data = path.read_bytes()
    (length,) = struct.unpack(">I", data[:4])
    header = unpack(data[4 : 4 + length])
    assert isinstance(header, dict)
    header["config"]["session"]["game"] = 2
    body = pack(header)
    moved = tmp_path / "p0-g3.moska"
    moved.write_bytes(struct.pack(">I", len(body)) + body + data[4 + length :])
    report = verify_transcript(moved)
    assert report.fault == "frame 0: a frame from another game or table"  # its table id
    transcripts = [t for t in _transcripts(folder) if t.name != "p0-g3.moska"]
    transcripts.append(Transcript(report, file_digest(moved), moved.name))
    fault = check_session(transcripts, _results(folder, nets)).fault
    assert fault is not None and fault.startswith("p0-g3.moska does not verify: frame 0")


# -------------------------------------------------------------------- vectors


def test_the_session_vectors_recompute() -> None:
    """protocol/vectors/sessions.json (scripts/make_vectors.py, PROTOCOL.md §22)."""
    import hashlib
    import json

    from moska_p2p.crypto.identity import signing_input
    from moska_p2p.net.wire import classify, link_id
    from moska_p2p.protocol.frames import FrameError

    root = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "sessions.json"
    data = json.loads(root.read_text())
    roster = [bytes.fromhex(k) for k in data["roster_sorted"]]
    for name in ("first_game", "second_game"):
        entry = data[name]
        config = TableConfig.from_wire(_from_json(entry["config"]))
        assert config.canonical().hex() == entry["canonical"]
        assert table_id(config, roster).hex() == entry["table_id"]
        assert session_id(config, roster).hex() == entry["session_id"]
    assert data["first_game"]["session_id"] == data["second_game"]["session_id"]
    assert data["first_game"]["table_id"] != data["second_game"]["table_id"]
    vector = data["result"]
    frame = bytes.fromhex(vector["frame"])
    result = open_result(frame)
    signer = Identity.from_seed(bytes.fromhex(vector["signer_seed"]))
    assert result.signer == signer.public_bytes
    kind, payload, signature = open_frame(frame[4:])
    assert (kind, signature.hex()) == (vector["kind"], vector["signature"])
    assert hashlib.sha256(signing_input(kind, payload)).hexdigest() == (
        vector["signing_input_sha256"]
    )
    assert unpack(payload) == _from_json(vector["payload"])
    again = sign_result(signer, result.session, result.seats, result.games, result.transcripts,
                        result.left, result.end)  # fmt: skip
    assert again == frame  # Ed25519 is deterministic
    vector = data["next"]  # signed over the id of a link of this session (§23)
    parts = [bytes.fromhex(vector[k]) for k in ("table", "dialer", "listener", "dialer_nonce",
                                                 "listener_nonce")]  # fmt: skip
    assert parts[0].hex() == data["first_game"]["session_id"]
    link = link_id(*parts)
    assert link.hex() == vector["link_id"]
    frame = bytes.fromhex(vector["frame"])
    message = classify(frame[4:], link)
    assert message is not None and message.kind == "next"
    assert message.body == {"game": 1, "go": True}
    _, payload, _ = open_frame(frame[4:])
    assert hashlib.sha256(signing_input("net/next", link + payload)).hexdigest() == (
        vector["signing_input_sha256"]
    )
    other = link_id(*parts[:3], parts[4], parts[3])  # the nonces of another connection
    with pytest.raises(FrameError, match="not signed for this link"):
        classify(frame[4:], other)


def _from_json(value: object) -> object:
    """The msgpack value of a vector's JSON form (PROTOCOL.md §18)."""
    if isinstance(value, dict):
        if set(value) == {"bin"}:
            return bytes.fromhex(value["bin"])
        if set(value) == {"float"}:
            return float(value["float"])
        return {k: _from_json(item) for k, item in value.items()}
    if isinstance(value, list):
        return [_from_json(item) for item in value]
    return value


def test_a_session_that_ends_with_a_forfeit_verifies_and_counts_it(tmp_path: Path) -> None:
    """Game 2 stopped by a peer that leaves mid-game: it is the session's last game, counted
    as a forfeit (a loss) of the leaver, and the session still verifies; a game after a
    stopped one would not."""
    nets = _play_session(tmp_path, nonce=11, stop=1)
    s = nets[0].sessions[0]
    assert s.game_id is not None and s.game is not None
    config = s.config.next_game(s.game_id, s.seats, next_dealer(s.dealer, s.game.loser))
    net = Network(make_peers(config, identities(2), seed=1102))
    start(net)
    play_out(net, until=lambda n: len(n.sessions[0].moves) >= 4)
    leaver = net.sessions[1]
    net.handle(1, leaver.leave("enough", net.clock))
    net.deliver_all()
    for i, peer in enumerate(net.sessions):
        write_transcript(tmp_path / f"p{i}-g2.moska", peer.me, peer.config, peer.roster,
                         peer.transcript)  # fmt: skip
    transcripts = _transcripts(tmp_path)
    stopped = [t for t in transcripts if "-g2." in t.name]
    assert all(t.report.valid and t.report.verdict for t in stopped), [t.report for t in stopped]
    first = nets[0].sessions[0]
    honest = net.sessions[0]
    assert honest.game_id is not None
    forfeit = GameRecord(2, honest.game_id, b"", (leaver.my_seat,), True, honest.dealer)
    records = [*_records(nets), forfeit]
    sid = session_id(first.config, first.roster)
    results = []
    for i, identity in enumerate(identities(2)):
        digests = [file_digest(tmp_path / f"p{i}-g{k}.moska") for k in (1, 2)]
        results.append(sign_result(identity, sid, first.seats, records, digests))
    check = check_session(transcripts, results)
    assert check.fault is None, check.fault
    assert check.tally is not None
    assert check.tally.forfeits[leaver.my_seat] == 1
    assert check.tally.losses[leaver.my_seat] == 1 + first.losers.count(leaver.my_seat)
    # a third game "after" the stopped one: refused
    assert stopped[0].report.config is not None
    later = dataclasses.replace(stopped[0].report.config, game=3)
    bogus = dataclasses.replace(stopped[0], report=dataclasses.replace(
        stopped[0].report, config=later))  # fmt: skip
    fault = check_session([*transcripts, bogus], results).fault
    assert fault == "game 3 follows game 2, which was stopped"

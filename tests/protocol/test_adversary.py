"""The adversary harness: any peer, scripted to deviate at any step of the deck or
the game, is named at the message where it deviates; nobody learns a card the rules did not
reveal; the honest peers agree; an abort costs the aborter the game.

A deviation is a function that rewrites the cheater's first message of one kind, before it
is signed again with the cheater's own key (:func:`protocol_harness._rewrite`): the honest
peers see a validly signed message, as they would from a modified client.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_harness import RandomBot, _msg, _rewrite, identities, play_out, start, step, table

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group
from moska_p2p.crypto.identity import verify
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.frames import encode_frame, open_frame, pack
from moska_p2p.protocol.session import STOPPED
from moska_p2p.protocol.simulate import Network, save_transcripts
from moska_p2p.protocol.transcript import read_transcript, verify_transcript, write_transcript

Change = Callable[[dict[str, Any]], None]


def _table_with(
    cheater: int, kind: str, change: Callable[[Network, dict[str, Any]], None], **kw: Any
) -> Network:
    box: list[Network] = []

    def apply(body: dict[str, Any]) -> None:
        change(box[0], body)

    net = table(
        kw.pop("preset", "durak"),
        kw.pop("players", 4),
        tamper=_rewrite(box, cheater, kind, apply),
        **kw,
    )  # type: ignore[arg-type]
    box.append(net)
    return net


def _under_way(preset: str, players: int, seed: int, moves: int) -> tuple[Network, list[RandomBot]]:
    """A table of honest random bots, dealt and ``moves`` moves into the game."""
    net = table(preset, players, seed=seed)
    start(net)
    bots = [RandomBot(i) for i in range(players)]
    for _ in range(moves):
        step(net, bots)
    return net, bots


def _honest(net: Network, cheater: int) -> list[int]:
    return [i for i in range(len(net.sessions)) if i != cheater]


def _assert_named(net: Network, cheater: int, kind: str, at: str | None = None) -> None:
    """Every honest peer stopped with ``kind`` naming the cheater, the cheater's signed
    ``at`` message first in the evidence, and all honest peers agree on the verdict."""
    culprit = net.sessions[cheater].me
    verdicts = []
    for i in _honest(net, cheater):
        verdict = net.verdicts[i]
        assert verdict is not None, f"peer {i} gave no verdict"
        assert verdict.kind == kind, verdict
        assert verdict.keys == (culprit,)
        if at is not None:
            assert verdict.evidence, verdict
            assert _msg(verdict.evidence[0]).type == at
        for frame in verdict.evidence:
            kind_of, payload, signature = open_frame(frame[4:])
            assert verify(culprit, kind_of, payload, signature)
        verdicts.append((verdict.kind, verdict.keys, verdict.reason))
    assert len(set(verdicts)) == 1, verdicts


def _assert_no_card_learnt(net: Network, cheater: int) -> None:
    """No honest peer knows a face of another seat's hand that was not shown, and the
    cheater knows no more than its own hand and public cards."""
    for i, session in enumerate(net.sessions):
        g = session.game
        if g is None:
            continue
        for seat in range(g.n):
            if seat != session.my_seat:
                assert g.hands[seat] == g.shown[seat], f"peer {i} knows seat {seat}'s cards"


def _pass_input(net: Network, cheater: int) -> list[bytes]:
    deck = net.sessions[cheater].deck
    assert deck is not None
    turn = deck.next_turn()
    assert turn is not None
    return deck._pass1_input() if turn[0] == "shuffle1" else deck._pass2_input()


# ---------------------------------------------------------------- the pass-2 copy attack


@pytest.mark.parametrize("cheater", [0, 1, 2, 3])
def test_pass2_copy_attack_is_named_at_its_pass(cheater: int) -> None:
    """The copy attack: a pass-2 seat writes ``in[j] * a^-1 * k[j']`` at position ``j'``
    so that ``j'`` opens, for everyone, to the card at ``j``. Its key points stay honest;
    only the re-keying proof can catch it, and it does, at that message, for every seat."""

    def copy(net: Network, body: dict[str, Any]) -> None:
        s = net.sessions[cheater]
        assert s.deck is not None and s.deck.secrets is not None
        source = _pass_input(net, cheater)
        secrets_ = s.deck.secrets
        points = list(body["points"])
        for victim, target in ((0, 30), (1, 31), (2, 32)):
            factor = group.scalar_mul(secrets_.scalar_inverse, secrets_.keys[target])
            points[target] = group.mul(factor, source[victim])
        body["points"] = points

    by_seat = table("durak", 4)  # the same seed: find the peer that sits at seat ``cheater``
    start(by_seat)
    index = next(i for i, s in enumerate(by_seat.sessions) if s.my_seat == cheater)
    net = _table_with(index, m.SHUFFLE2, copy)
    start(net)
    play_out(net)
    _assert_named(net, index, v.BAD_SHUFFLE, at=m.SHUFFLE2)
    for i in _honest(net, index):
        assert net.sessions[i].game is None  # never dealt: no key was ever released
        assert net.sessions[i].keys == {}


# ---------------------------------------------------------------- pass 1


def _scaled_by_another(net: Network, body: dict[str, Any], cheater: int) -> None:
    s = net.sessions[cheater]
    assert s.deck is not None and s.deck.secrets is not None
    other = group.hash_to_scalar(b"another scalar")
    source = _pass_input(net, cheater)
    body["points"] = [group.mul(other, source[i]) for i in s.deck.secrets.permutation]


def _replaced(net: Network, body: dict[str, Any], cheater: int) -> None:
    points = list(body["points"])
    points[5] = mp.card_point(secrets.token_bytes(32), 0)  # a valid point that is no card
    body["points"] = points


def _duplicated(net: Network, body: dict[str, Any], cheater: int) -> None:
    points = list(body["points"])
    points[3] = points[4]
    body["points"] = points


def _left_out(net: Network, body: dict[str, Any], cheater: int) -> None:
    body["points"] = list(body["points"])[:-1]


def _forged_proof(net: Network, body: dict[str, Any], cheater: int) -> None:
    proof = bytearray(body["proof"])
    proof[len(proof) // 2] ^= 1
    body["proof"] = bytes(proof)


def _missing_proof(net: Network, body: dict[str, Any], cheater: int) -> None:
    body["proof"] = b""


def _other_public_scalar(net: Network, body: dict[str, Any], cheater: int) -> None:
    body["scalar"] = group.base_mul(group.hash_to_scalar(b"not my scalar"))


PASS1_CHEATS = {
    "card replaced": _replaced,
    "card duplicated": _duplicated,
    "card left out": _left_out,
    "another scalar": _scaled_by_another,
    "forged proof": _forged_proof,
    "missing proof": _missing_proof,
    "another public scalar": _other_public_scalar,
}


@pytest.mark.parametrize("name", sorted(PASS1_CHEATS))
@pytest.mark.parametrize("cheater", [0, 2])
def test_pass1_cheat_is_named_at_its_pass(name: str, cheater: int) -> None:
    cheat = PASS1_CHEATS[name]
    net = _table_with(cheater, m.SHUFFLE1, lambda n, b: cheat(n, b, cheater), players=3)
    start(net)
    play_out(net)
    _assert_named(net, cheater, v.BAD_SHUFFLE, at=m.SHUFFLE1)
    for i in _honest(net, cheater):
        assert net.sessions[i].game is None


@pytest.mark.parametrize("name", ["card replaced", "forged proof", "missing proof"])
def test_pass2_cheat_is_named_at_its_pass(name: str) -> None:
    cheat = PASS1_CHEATS[name]
    net = _table_with(1, m.SHUFFLE2, lambda n, b: cheat(n, b, 1), preset="moska", players=3)
    start(net)
    play_out(net)
    _assert_named(net, 1, v.BAD_SHUFFLE, at=m.SHUFFLE2)


def test_pass2_wrong_key_point_is_named() -> None:
    def wrong(net: Network, body: dict[str, Any]) -> None:
        keys = list(body["keys"])
        keys[7] = group.base_mul(group.hash_to_scalar(b"a key it does not use"))
        body["keys"] = keys

    net = _table_with(2, m.SHUFFLE2, wrong, players=3)
    start(net)
    play_out(net)
    _assert_named(net, 2, v.BAD_SHUFFLE, at=m.SHUFFLE2)


# ---------------------------------------------------------------- keys


def test_wrong_released_key_is_named_at_its_release() -> None:
    def wrong(net: Network, body: dict[str, Any]) -> None:
        keys = [list(pair) for pair in body["keys"]]
        keys[0][1] = group.hash_to_scalar(b"a wrong key")
        body["keys"] = keys

    net = _table_with(1, m.KEYS, wrong, preset="moska", players=4)
    start(net)
    play_out(net)
    _assert_named(net, 1, v.BAD_KEY, at=m.KEYS)
    _assert_no_card_learnt(net, 1)


def test_wrong_key_shown_with_a_move_is_named() -> None:
    def wrong(net: Network, body: dict[str, Any]) -> None:
        cards = [list(pair) for pair in body["cards"]]
        if cards:
            cards[0][1] = group.hash_to_scalar(b"a wrong key")
        else:  # a move that shows nothing: show a card it does not hold
            cards = [[0, group.hash_to_scalar(b"x")]]
        body["cards"] = cards

    net = _table_with(0, m.MOVE, wrong, preset="moska", players=3)
    start(net)
    play_out(net)
    verdict = net.verdicts[1]
    assert verdict is not None and verdict.keys == (net.sessions[0].me,)
    assert verdict.kind in (v.BAD_KEY, v.ILLEGAL_MOVE)
    _assert_named(net, 0, verdict.kind, at=m.MOVE)


# ---------------------------------------------------------------- aborts are forfeits


def _silent_from(
    cheater: int, kind: str
) -> Callable[[Network], Callable[[int, int, bytes], list[bytes]]]:
    """A tamper hook that drops everything the cheater sends from its first ``kind`` on."""

    def make(box: Network) -> Callable[[int, int, bytes], list[bytes]]:
        silent = False

        def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
            nonlocal silent
            msg = _msg(frame)
            if msg.sender != box.sessions[cheater].me:
                return [frame]
            if msg.type == kind or silent:
                silent = True
                return []
            return [frame]

        return tamper

    return make


@pytest.mark.parametrize(
    ("kind", "preset"),
    [
        (m.SEAT, "durak"),
        (m.SHUFFLE1, "durak"),
        (m.SHUFFLE2, "durak"),
        (m.KEYS, "moska"),
        (m.CLAIM, "durak"),
        (m.MOVE, "mustamaija"),
    ],
)
def test_withholding_is_abandonment_once_the_seats_are_drawn(
    kind: str, preset: str, tmp_path: Path
) -> None:
    """Withholding a message the game waits for is abandonment (PROTOCOL.md §15.5): every
    other seat signs that the culprit went silent, and the quorum convicts it. Before the seats
    are drawn (its seat secret) there is no game to lose: it is only named (§15.4)."""
    cheater = 1
    box: list[Network] = []
    hook = _silent_from(cheater, kind)
    net = table(
        preset,
        3,
        timeout=5.0,
        tamper=lambda s, t, f: hook(box[0])(s, t, f) if box else [f],
    )
    hooked = hook(net)
    net.tamper = hooked
    box.append(net)
    start(net)
    play_out(net)
    for _ in range(100):
        if all(net.sessions[i].stage == STOPPED for i in _honest(net, cheater)):
            break
        net.clock += 2.0
        for i, s in enumerate(net.sessions):
            if i != cheater:
                net.handle(i, s.tick(net.clock))
        net.deliver_all()
    culprit = net.sessions[cheater]
    convicted = kind != m.SEAT
    for i in _honest(net, cheater):
        s = net.sessions[i]
        assert s.stage == STOPPED
        assert s.verdict is not None and s.verdict.keys == (culprit.me,), s.verdict
        assert s.verdict.kind == (v.ABANDONED if convicted else v.TIMEOUT), s.verdict
        assert s.losers == ((culprit.my_seat,) if convicted else ())
        assert s.verdict.conviction == convicted
        assert _msg(s.transcript[-1]).type == m.VERDICT  # signed by the honest peer
    _assert_no_card_learnt(net, cheater)
    paths = save_transcripts(_only(net, _honest(net, cheater)), tmp_path)
    for path in paths:
        report = verify_transcript(path)
        assert report.valid, report.fault
        assert report.conviction == convicted
        if convicted:
            assert report.losers == [culprit.my_seat] and report.lost_contact == []
        else:
            assert report.losers == [] and report.lost_contact == [-1]


def _only(net: Network, indices: list[int]) -> Any:
    """A stand-in result holding only the given peers (to save their transcripts)."""
    return SimpleNamespace(sessions=[net.sessions[i] for i in indices])


def test_leaving_mid_game_is_a_forfeit(tmp_path: Path) -> None:
    net, _bots = _under_way("moska", 4, 3, 15)
    leaver = 2
    net.handle(leaver, net.sessions[leaver].leave("had to go", net.clock))
    net.deliver_all()
    seat = net.sessions[leaver].my_seat
    _assert_named(net, leaver, v.LEFT, at=m.LEAVE)
    for i in _honest(net, leaver):
        assert net.sessions[i].losers == (seat,)
    for path in save_transcripts(_only(net, _honest(net, leaver)), tmp_path):
        report = verify_transcript(path)
        assert report.valid, report.fault
        assert report.losers == [seat]


def test_bogus_stop_releases_nothing_and_names_its_sender() -> None:
    """v1's early audit let a caller harvest every honest seed. A v2 peer that stops the
    game accusing someone without proof is itself named, and no honest peer releases any
    key or secret because of it."""
    net, _bots = _under_way("moska", 4, 5, 10)
    liar = 0
    victim = net.sessions[3].me
    keys_before = [dict(s.keys) for s in net.sessions]
    frame = net.sessions[liar].craft(
        m.VERDICT,
        {"kind": v.ILLEGAL_MOVE, "culprits": [victim], "reason": "trust me", "evidence": []},
    )
    for i in _honest(net, liar):
        net.handle(i, net.sessions[i].receive(frame, net.clock))
    net.deliver_all()
    _assert_named(net, liar, v.LEFT, at=m.VERDICT)
    for i in _honest(net, liar):
        assert net.sessions[i].keys == keys_before[i]
        assert net.sessions[i].losers == (net.sessions[liar].my_seat,)


# ---------------------------------------------------------------- no exception escapes


_MSGPACK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.binary(max_size=40)
    | st.text(max_size=10)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _game_frames() -> tuple[Network, list[bytes]]:
    net = table("durak", 3, seed=77)
    start(net)
    play_out(net, max_moves=12)
    return net, list(net.sessions[0].transcript)


_NET, _FRAMES = _game_frames()


@settings(max_examples=300, deadline=None)
@given(
    index=st.integers(0, len(_FRAMES) - 1),
    field_index=st.integers(0, 20),
    value=_MSGPACK,
    envelope=st.booleans(),
)
def test_every_field_perturbed_never_raises(
    index: int, field_index: int, value: Any, envelope: bool
) -> None:
    """Any message of a real game with any field (of the envelope or the body) replaced by
    any msgpack value, signed again by its real sender: a fresh honest peer fed the game up
    to that frame, then the perturbed frame, only ever returns outputs."""
    frame = _FRAMES[index]
    msg = _msg(frame)
    data: dict[str, Any] = {
        "v": msg.version,
        "g": msg.game,
        "f": msg.sender,
        "s": msg.seq,
        "p": msg.prev,
        "t": msg.type,
        "b": m.to_wire(msg.body),
        "h": [list(h) for h in msg.heads],
    }
    target = data if envelope or not data["b"] else data["b"]
    names = sorted(target)
    target[names[field_index % len(names)]] = value
    payload = pack(data)
    signer = next(s for s in _NET.sessions if s.me == msg.sender)
    assert signer.identity is not None
    signature = signer.identity.sign(msg.type, payload)
    body_bytes = msgpack.packb([msg.type, payload, signature], use_bin_type=True)
    forged = len(body_bytes).to_bytes(4, "big") + body_bytes  # no size cap: the peer's job
    fresh = table("durak", 3, seed=77).sessions[1]
    if fresh.me == msg.sender:
        fresh = table("durak", 3, seed=77).sessions[2]
    for earlier in _FRAMES[:index]:
        assert isinstance(fresh.receive(earlier, 0.0), list)
    outputs = fresh.receive(forged, 0.0)
    assert isinstance(outputs, list)
    assert all(
        isinstance(o, v.Send | v.Rejected | v.Seated | v.Moved | v.Finished | v.Stopped)
        for o in outputs
    )


# ---------------------------------------------------------------- transcripts


def _finished_transcript(tmp_path: Path) -> Path:
    net = table("durak", 3, seed=31)
    start(net)
    play_out(net)
    assert all(s.final_hash for s in net.sessions)
    return save_transcripts(_only(net, [0]), tmp_path)[0]


def test_a_transcript_verifies_without_any_secret(tmp_path: Path) -> None:
    path = _finished_transcript(tmp_path)
    report = verify_transcript(path)
    assert report.valid, report.fault
    _, _config, _roster, frames = read_transcript(path)
    kinds = {_msg(f).type for f in frames}
    assert {m.SHUFFLE1, m.SHUFFLE2, m.RESULT} <= kinds
    assert "audit" not in kinds and "commit" not in kinds  # v1's seed reveal is gone


@pytest.mark.parametrize("kind", [m.SHUFFLE1, m.SHUFFLE2])
def test_a_transcript_with_a_proof_altered_is_rejected_naming_that_frame(
    kind: str, tmp_path: Path
) -> None:
    path = _finished_transcript(tmp_path)
    owner, config, roster, frames = read_transcript(path)
    index = next(i for i, f in enumerate(frames) if _msg(f).type == kind)
    msg = _msg(frames[index])
    body = m.to_wire(msg.body)
    proof = bytearray(body["proof"])
    proof[40] ^= 0x01
    body["proof"] = bytes(proof)
    # Without the sender's key the change breaks the signature ...
    unsigned = bytearray(frames[index])
    unsigned[unsigned.find(bytes(msg.body.proof[:48])) + 40] ^= 0x01
    forged = tmp_path / "forged.moska"
    write_transcript(
        forged, owner, config, roster, [*frames[:index], bytes(unsigned), *frames[index + 1 :]]
    )
    report = verify_transcript(forged)
    assert not report.valid and report.fault is not None
    assert report.fault.startswith(f"frame {index}:") and "forged signature" in report.fault
    # ... and signed again by its sender (a peer rewriting its own history) it is a bad shuffle.
    sender = next(i for i in identities(3) if i.public_bytes == msg.sender)
    data = {"v": msg.version, "g": msg.game, "f": msg.sender, "s": msg.seq, "p": msg.prev}
    data["h"] = [list(h) for h in msg.heads]
    payload = pack({**data, "t": msg.type, "b": body})
    resigned = encode_frame(kind, payload, sender.sign(kind, payload))
    rewritten = tmp_path / "rewritten.moska"
    write_transcript(
        rewritten, owner, config, roster, [*frames[:index], resigned, *frames[index + 1 :]]
    )
    report = verify_transcript(rewritten)
    assert not report.valid and report.fault is not None
    assert f"frame {index}" in report.fault and "bad-shuffle" in report.fault, report.fault


# ---------------------------------------------------------------- another peer's verdict


def test_a_bogus_timeout_verdict_does_not_make_its_victim_concede() -> None:
    """Anyone can sign "timeout: you"; a peer that was running all along does not accept its
    own silence from hearsay: it names the accuser (regression: the victim conceded)."""
    for players in (2, 3):
        net = table("moska", players, seed=5)
        start(net)
        play_out(net, max_moves=6)
        liar, victim = 0, players - 1
        frame = net.sessions[liar].craft(
            m.VERDICT,
            {
                "kind": v.TIMEOUT,
                "culprits": [net.sessions[victim].me],
                "reason": "did not answer within 30 s",
                "evidence": [],
            },
        )
        for i in _honest(net, liar):
            net.handle(i, net.sessions[i].receive(frame, net.clock))
        net.deliver_all()
        _assert_named(net, liar, v.LEFT, at=m.VERDICT)


def test_a_lagging_peer_waits_for_the_evidence_instead_of_blaming_the_messenger() -> None:
    """The cheat frame is queued at a peer that cannot apply it yet (it still lacks an
    earlier move); an honest peer's verdict with that frame as evidence arrives first. The
    lagging peer waits, applies the evidence in order, and names the cheater."""
    for seed in range(1, 30):
        net, bots = _under_way("moska", 4, seed, 5)
        mover = next((i for i, s in enumerate(net.sessions) if s.my_turn), None)
        if mover is None:
            continue
        lagging = (mover + 1) % 4
        held: list[tuple[int, int, bytes]] = []

        def tamper(
            source: int,
            target: int,
            frame: bytes,
            mover: int = mover,
            lagging: int = lagging,
            held: list[tuple[int, int, bytes]] = held,
        ) -> list[bytes]:
            if source == mover and target == lagging:
                held.append((source, target, frame))
                return []
            return [frame]

        net.tamper = tamper
        s = net.sessions[mover]
        assert s.game is not None
        net.handle(mover, s.play(bots[mover].choose(s.game.view(s.my_seat), s.legal_moves())))
        net.deliver_all()
        cheater = next((i for i, x in enumerate(net.sessions) if x.my_turn), None)
        if cheater is None or cheater in (lagging, mover):
            continue
        c = net.sessions[cheater]
        assert c.game is not None
        body = {"move": "take", "state": bytes.fromhex(c.game.state_hash()), "cards": []}
        if c.game.decision == "defend":
            body["move"] = "attack 2C"
        frame = c.craft(m.MOVE, body)
        for i in range(4):
            if i != cheater:
                net.handle(i, net.sessions[i].receive(frame, net.clock))
        net.deliver_all()
        if net.sessions[lagging].stage == STOPPED:
            continue  # the move did not depend on the held one: try another seed
        net.tamper = None
        for _, target, f in held:
            net.handle(target, net.sessions[target].receive(f, net.clock))
        net.deliver_all()
        verdict = net.verdicts[lagging]
        assert verdict is not None
        assert verdict.keys == (c.me,), verdict
        return
    raise AssertionError("no seed gave the lagging-peer situation")


def test_a_second_result_is_a_violation() -> None:
    net = table("mustamaija", 2, seed=3)
    start(net)
    play_out(net)
    first = net.sessions[0]
    result = next(
        f for f in first.transcript if _msg(f).type == m.RESULT and _msg(f).sender == first.me
    )
    body = m.to_wire(_msg(result).body)
    body["losers"] = list(body["losers"])
    fresh = table("mustamaija", 2, seed=3)
    start(fresh)
    play_out(fresh, until=lambda n: n.sessions[1].stage == 6)  # RESULT: waiting for results
    if fresh.sessions[1].stage == 6:
        again = fresh.sessions[0].craft(m.RESULT, body, seq=_msg(result).seq + 1)
        fresh.sessions[1].receive(again, 0.0)
        assert fresh.sessions[1].verdict is None or fresh.sessions[1].verdict.kind == v.PROTOCOL


def test_a_message_without_one_head_per_player_is_a_violation() -> None:
    net = table("durak", 3, seed=4)
    start(net)
    cheat = net.sessions[2]
    msg = _msg(cheat.transcript[-1])
    data = {"v": 2, "g": cheat.game_id, "f": cheat.me, "s": cheat.peers[cheat.me].next_seq}
    data |= {"p": cheat.peers[cheat.me].last_hash, "t": m.LEAVE, "b": {"reason": "x"}, "h": []}
    payload = pack(data)
    assert cheat.identity is not None
    frame = encode_frame(m.LEAVE, payload, cheat.identity.sign(m.LEAVE, payload))
    victim = net.sessions[0]
    victim.receive(frame, 0.0)
    assert victim.verdict is not None and victim.verdict.kind == v.PROTOCOL
    assert "heads" in victim.verdict.reason
    del msg


def test_the_leavers_own_transcript_is_a_valid_record_of_its_forfeit(tmp_path: Path) -> None:
    net, _bots = _under_way("moska", 3, 8, 6)
    net.handle(1, net.sessions[1].leave("had to go", net.clock))
    net.deliver_all()
    for path in save_transcripts(net, tmp_path):
        report = verify_transcript(path)
        assert report.valid, report.fault
        assert report.verdict is not None and report.verdict.startswith("left")
        assert report.losers == [net.sessions[1].my_seat]


def test_a_peer_that_refused_hearsay_of_silence_leaves_a_record_that_verifies(
    tmp_path: Path,
) -> None:
    """Peer 0 stops over peer 2's silence; peer 1, whose clock has not yet
    seen half the timeout pass, refuses the verdict (a stop it cannot confirm: ``left``
    naming peer 0, its signer's forfeit, §15.3 step 4). A file has no clock, so the verifier
    follows the owner's own answer: peer 1's record verifies, with peer 0 its loser."""
    silent = 2
    hook = _silent_from(silent, m.MOVE)
    box: list[Network] = []
    net = table(
        "moska", 3, timeout=5.0, tamper=lambda s, t, f: hook(box[0])(s, t, f) if box else [f]
    )
    net.tamper = hook(net)
    box.append(net)
    start(net)
    play_out(net)
    first, second = net.sessions[0], net.sessions[1]
    assert first.me != net.sessions[silent].me and set(first.waiting_on()) == {
        net.sessions[silent].me
    }
    # Past the grace peer 0 signs its statement; nobody corroborates it in time (peer 1 has
    # not seen the silence), so it stops with an uncorroborated timeout.
    stopped = first.tick(100.0) + first.tick(112.0)
    sent = [o.frame for o in stopped if isinstance(o, v.Send)]
    assert first.stage == STOPPED and _msg(sent[-1]).type == m.VERDICT
    for frame in sent:
        second.receive(frame, 1.0)  # one second in: it has not waited half the timeout yet
    assert second.stage == STOPPED and second.verdict is not None
    assert second.verdict.kind == v.LEFT and second.verdict.keys == (first.me,)
    assert second.verdict.conviction and second.losers == (first.my_seat,)
    (path,) = save_transcripts(_only(net, [1]), tmp_path)
    report = verify_transcript(path)
    assert report.valid, report.fault
    assert report.losers == [first.my_seat] and report.lost_contact == []

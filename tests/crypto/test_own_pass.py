"""A seat does not re-verify the pass it made itself, and only that pass, byte for byte.

DeckPhase keeps an immutable copy of what its own make_pass1/make_pass2 returned; the same
body arriving back (the session applies its own messages) skips the proof check, while any
changed byte, a modified client's tampered own pass included, is verified and refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from moska_p2p.crypto import deck as mp
from moska_p2p.protocol.deck_phase import DeckPhase

GAME_ID = bytes(range(32))
CARDS = list(range(6))


def _phase(seat: int) -> DeckPhase:
    secrets = mp.DeckSecrets.from_seed(bytes([seat + 1]) * 32, GAME_ID, seat, len(CARDS))
    return DeckPhase(GAME_ID, 2, CARDS, secrets)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for name in ("verify_pass1", "verify_pass2"):
        real = getattr(mp, name)

        def counted(*args: Any, _real: Any = real, _name: str = name) -> None:
            calls.append(_name)
            _real(*args)

        monkeypatch.setattr(mp, name, counted)
    return calls


def test_an_own_pass_is_not_verified_again_but_every_other_pass_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _counting(monkeypatch)
    mine, theirs = _phase(0), _phase(1)
    body = mine.make_pass1(0)
    mine.accept_pass1(0, body)
    theirs.accept_pass1(0, body)
    assert calls == ["verify_pass1"]  # seat 1 checked it; seat 0 made it
    body = theirs.make_pass1(1)
    theirs.accept_pass1(1, body)
    mine.accept_pass1(1, body)
    second = mine.make_pass2(0)
    mine.accept_pass2(0, second)
    theirs.accept_pass2(0, second)
    assert calls == ["verify_pass1", "verify_pass1", "verify_pass2"]


def test_a_tampered_own_pass_is_verified_and_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    mine = _phase(0)
    body = mine.make_pass1(0)
    proof = bytearray(body.proof)
    proof[-1] ^= 0x01
    with pytest.raises(mp.DeckError, match="pass 1: the shuffle argument does not verify"):
        mine.accept_pass1(0, dataclasses.replace(body, proof=bytes(proof)))
    assert calls == ["verify_pass1"]
    body = mine.make_pass1(0)
    body = dataclasses.replace(body, points=body.points[::-1])  # the same points, reordered
    with pytest.raises(mp.DeckError, match="pass 1: the shuffle argument does not verify"):
        mine.accept_pass1(0, body)
    assert calls == ["verify_pass1", "verify_pass1"]

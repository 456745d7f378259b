"""The attack vectors' table: an honest peer (seat 0) and a cheater (seat 1), and the
ways the cheater's frames are rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moska_p2p.protocol import messages as m
from moska_p2p.protocol.session import (
    PeerSession,
)
from scripts.lib.vectors.base import Table, claims_of, jv, message, outcome, steps_json

# -- attack vectors -----------------------------------------------------------------------------

ATTACK_PRESET, ATTACK_PLAYERS, ATTACK_SEED = "durak", 2, 3
HONEST, CHEAT = 0, 1


def attack_table(**kwargs: Any) -> Table:
    return Table(
        ATTACK_PRESET, ATTACK_PLAYERS, seed=kwargs.pop("seed", ATTACK_SEED), watch=HONEST, **kwargs
    )


def rewrite_first(table: Table, kind: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Make the cheater's first ``kind`` message carry ``change``, re-signed with the same
    sequence number and chain, as a cheating client would send it; later messages of the
    cheater are re-signed to follow it."""
    cheat = table.peers[CHEAT]
    renamed: dict[bytes, bytes] = {}
    forged: dict[bytes, bytes] = {}
    state = {"done": False}

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        msg = message(frame)
        if msg.sender != cheat.me:
            return [frame]
        if target == CHEAT:
            return []
        if msg.hash not in forged:
            body = m.to_wire(msg.body)
            if msg.type == kind and not state["done"]:
                change(body)
                state["done"] = True
            elif msg.prev not in renamed:
                return [frame]
            prev = renamed.get(msg.prev, msg.prev)
            new = cheat.craft(msg.type, body, seq=msg.seq, prev=prev, game=msg.game)
            forged[msg.hash] = new
            renamed[msg.hash] = message(new).hash
        return [forged[msg.hash]]

    table.tamper = tamper


def until_play(table: Table) -> None:
    table.start()
    table.settle()
    assert table.to_act() is not None


def case(name: str, description: str, table: Table, ignored: int | None = None) -> dict[str, Any]:
    result = outcome(table, table.steps, ignored)
    add_matches(result)
    out: dict[str, Any] = {"name": name, "description": description}
    if table.config != attack_table().config:
        out["config"] = jv(table.config.to_wire())  # this case's own table settings
    if table.seed != ATTACK_SEED:
        out["peers"] = table.peers_json()  # this case's own per-game secrets
    return out | {"steps": steps_json(table.steps), "expect": result}


def add_matches(result: dict[str, Any]) -> None:
    for item in result["rejected"]:
        item["match"] = item["reason"].split(":")[0]


def _pass_input(session: PeerSession, stage: str) -> list[bytes]:
    """The input of ``session``'s own pass of ``stage`` (it has applied that pass already)."""
    deck = session.deck
    assert deck is not None
    seat = session.my_seat
    if stage == m.SHUFFLE1:
        return deck.initial if seat == 0 else deck.pass1[seat - 1]
    return deck.pass1[-1] if seat == 0 else deck.pass2[seat - 1]


def _lying_table(seed: int) -> Table | None:
    """A table whose cheater says "none" in the D3 round of a trump it holds, and does not
    check itself; ``None`` if the cheater does not hold the trump shown first."""
    probe = attack_table(seed=seed)
    probe.start()
    probe.settle()
    shown = [c for c in claims_of(probe.watched) if c[2] is not None]
    if not shown or shown[0][0] != probe.peers[CHEAT].my_seat:
        return None
    t = attack_table(seed=seed)
    liar = t.peers[CHEAT]
    honest_claim = liar.send_claim
    lied = {"done": False}

    def lying_claim() -> None:  # a client that hides its lowest trump once
        g = liar.game
        assert g is not None
        if not lied["done"] and g.hands[liar.my_seat] >> (liar.claim_rank * 4 + g.trump) & 1:
            lied["done"] = True
            liar.send(m.ClaimBody(rank=liar.claim_rank, card=None))
        else:
            honest_claim()

    liar.send_claim = lying_claim  # type: ignore[method-assign]
    liar.claim_book.deny = lambda denial: None  # type: ignore[method-assign]  # no self-check
    return t

"""Shared helpers for the in-memory protocol tests (imported by the test modules)."""

from __future__ import annotations

from collections.abc import Callable

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import open_frame
from moska_p2p.protocol.session import DONE, STOPPED, PeerSession
from moska_p2p.protocol.simulate import Network, Tamper, make_peers


def identities(n: int) -> list[Identity]:
    return [Identity.from_seed(bytes([i + 1]) * 32) for i in range(n)]


def table(
    preset: str,
    players: int,
    *,
    seed: int = 1,
    tamper: Tamper | None = None,
    reorder: bool = False,
    timeout: float = 30.0,
    **options: str,
) -> Network:
    config = TableConfig(preset, players, bytes([seed % 256]) * 32, options, timeout)
    return Network(
        make_peers(config, identities(players), seed=seed), tamper=tamper, reorder=reorder
    )


def start(net: Network) -> None:
    for index, session in enumerate(net.sessions):
        net.handle(index, session.start(net.clock))
    net.deliver_all()


def step(net: Network, bots: list[RandomBot], skip: set[int] = frozenset()) -> bool:  # type: ignore[assignment]
    """One move by the peer whose turn it is (unless it is in ``skip``); False if none."""
    net.deliver_all()
    for index, session in enumerate(net.sessions):
        if index in skip or session.stage == STOPPED:
            continue
        if session.my_turn and session.game is not None:
            move = bots[index].choose(session.game.view(session.my_seat), session.legal_moves())
            net.handle(index, session.play(move, net.clock))
            net.deliver_all()
            return True
    return False


def play_out(
    net: Network,
    *,
    seed: int = 0,
    until: Callable[[Network], bool] | None = None,
    max_moves: int = 5000,
) -> None:
    bots = [RandomBot(seed * 10 + i) for i in range(len(net.sessions))]
    for _ in range(max_moves):
        if until is not None and until(net):
            return
        if not step(net, bots):
            break
    net.deliver_all()


def index_of_seat(net: Network, seat: int) -> int:
    return next(i for i, s in enumerate(net.sessions) if s.my_seat == seat)


def honest_verdicts(net: Network, cheater: int) -> list[v.Verdict | None]:
    return [verdict for i, verdict in enumerate(net.verdicts) if i != cheater]


def all_done(net: Network) -> bool:
    return all(s.stage == DONE for s in net.sessions)


def to_act_index(net: Network) -> int | None:
    for i, s in enumerate(net.sessions):
        if s.my_turn:
            return i
    return None


def _msg(frame: bytes) -> m.Message:
    _, payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload)


def _rewrite(net_box: list[Network], cheater: int, kind: str, change: object) -> object:
    """A tamper hook that makes the cheater send its first ``kind`` message with ``change``
    applied, re-signing it and every later message so that its chain stays consistent (as
    a real cheating client would)."""
    forged: dict[bytes, bytes] = {}  # original payload hash -> forged frame
    renamed: dict[bytes, bytes] = {}  # original payload hash -> forged payload hash
    changed = False

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        nonlocal changed
        msg = _msg(frame)
        s = net_box[0].sessions[cheater]
        if msg.sender != s.me:
            return [frame]
        if target == cheater:
            return []  # the cheater knows what it sent; relays of its forgeries are not news
        if msg.hash not in forged:
            body = m.to_wire(msg.body)
            if msg.type == kind and not changed:
                change(body)  # type: ignore[operator]
                changed = True
            elif msg.prev not in renamed:
                return [frame]
            prev = renamed.get(msg.prev, msg.prev)
            new = s.craft(msg.type, body, seq=msg.seq, prev=prev, game=msg.game)
            forged[msg.hash] = new
            renamed[msg.hash] = _msg(new).hash
        return [forged[msg.hash]]

    return tamper


__all__ = ["PeerSession", "RandomBot"]

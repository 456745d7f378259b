"""The seating phase of one game, sans-IO: ``hello``, then ``seat`` (PROTOCOL.md §9).

It owns the first two stages (:mod:`.stages`). In ``hello`` every peer sends a nonce and a
commitment to a secret; once every hello is in, the game id is known (the nonces bind it)
and every peer reveals its secret in ``seat``. The seats and the first dealer (RULES M2) come
from every secret together, so nobody can choose them: a peer that saw the others' secrets
before committing could, which is why the commitment comes first (commit, then reveal). A
session's later game (M24) keeps its seats and dealer from the table's settings, and still
commits and reveals, so the stages stay the same.
"""

from __future__ import annotations

import hashlib
import struct

from . import messages as m
from . import verdict as v
from .config import TableConfig, game_id
from .phase import Handler, Host, Peer, Violation
from .stages import HELLO, SEAT, SHUFFLE1


def seat_commitment(table: bytes, sender: bytes, secret: bytes) -> bytes:
    """The hello's commitment to the seat secret, bound to the table and the sender, so it
    cannot be copied to another table or by another peer."""
    return length_prefixed_hash(b"moska-p2p/v2/seat", table, sender, secret)


def length_prefixed_hash(*parts: bytes) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        h.update(struct.pack(">I", len(part)))
        h.update(part)
    return h.digest()


class Seating:
    """Who sits where, for one peer (or an observer): its own nonce and secret, then the
    seats and the dealer drawn from everyone's."""

    def __init__(self, host: Host, table: bytes, name: str, nonce: bytes, secret: bytes):
        self.host = host
        self.table = table
        self.name = name
        self.nonce = nonce
        self.secret = secret
        self.seats: list[bytes] = []  # public key of each seat
        self.seat_of: dict[bytes, int] = {}
        self.dealer = -1

    def begin(self) -> None:
        """Send this peer's hello: its nonce, its commitment, the table it expects."""
        host = self.host
        host.send(
            m.HelloBody(
                name=self.name[: m.MAX_NAME],
                nonce=self.nonce,
                seat_commit=seat_commitment(self.table, host.me, self.secret),
                config=host.config.to_wire(),
                roster=tuple(host.roster),
            )
        )

    def advance(self) -> bool:
        """Every hello in: the game id, and this peer's secret. Every secret in: the seats."""
        host = self.host
        peers = host.peers
        if host.stage == HELLO and all(p.nonce for p in peers.values()):
            host.enter(SEAT)
            host.begin_game(game_id(self.table, [peers[k].nonce for k in host.roster]))
            if not host.is_observer:
                host.send(m.SeatBody(secret=self.secret))
            return True
        if host.stage == SEAT and all(p.seat_secret for p in peers.values()):
            self._draw_seats()
            host.enter(SHUFFLE1)
            return True
        return False

    def handlers(self) -> dict[str, Handler]:
        return {m.HELLO: self.on_hello, m.SEAT: self.on_seat}

    def waiting_on(self) -> list[bytes]:
        """Whose hello or seat secret is missing, in roster order."""
        host = self.host
        if host.stage == HELLO:
            return [k for k in host.roster if not host.peers[k].nonce]
        return [k for k in host.roster if not host.peers[k].seat_secret]

    def on_hello(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        if msg.seq != 0 or peer.nonce:
            raise Violation(v.PROTOCOL, peer.key, "a second hello", (frame,))
        body = msg.body_as(m.HelloBody)
        try:
            config = TableConfig.from_wire(body.config)
        except (ValueError, TypeError) as error:
            raise Violation(
                v.DISAGREEMENT, peer.key, f"bad table settings: {error}", (frame,)
            ) from None
        if config != self.host.config or list(body.roster) != self.host.roster:
            raise Violation(
                v.DISAGREEMENT, peer.key, "does not agree on the table settings", (frame,)
            )
        peer.name = body.name
        peer.nonce = body.nonce
        peer.seat_commit = body.seat_commit

    def on_seat(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        if peer.seat_secret:
            raise Violation(v.PROTOCOL, peer.key, "a second seat secret", (frame,))
        secret = msg.body_as(m.SeatBody).secret
        if seat_commitment(self.table, peer.key, secret) != peer.seat_commit:
            raise Violation(
                v.PROTOCOL, peer.key, "seat secret does not match its commitment", (frame,)
            )
        peer.seat_secret = secret

    def _draw_seats(self) -> None:
        """Seats and dealer from every peer's revealed secret (commit, then reveal)."""
        host = self.host
        joint = hashlib.sha256(b"moska-p2p/joint")
        for key in host.roster:
            joint.update(host.peers[key].seat_secret)
        shared = joint.digest()
        self.seats = sorted(host.roster, key=lambda k: length_prefixed_hash(shared, k))
        # M2: the first dealer is drawn from the shared randomness.
        draw = length_prefixed_hash(b"moska-p2p/dealer", shared)
        self.dealer = int.from_bytes(draw, "big") % len(self.seats)
        config = host.config
        if config.seating:  # a session's later game (M24): its seats, the loser deals
            self.seats, self.dealer = list(config.seating), config.dealer
        self.seat_of = {k: s for s, k in enumerate(self.seats)}
        assert host.game_id is not None
        host.emit(v.Seated(tuple(self.seats), self.dealer, host.game_id))

"""Opening cards during play: key releases, faces learnt, cards shown from a hand.

A card at deck position ``pos`` is masked by every seat's key for ``pos`` (PROTOCOL.md, "The
deck"); it is opened by releasing keys. The engine says which positions became due
(``Game.take_reveal_requests``: a draw for one seat, or a public reveal such as the turned
trump); every seat but the one drawing then owes its key in a ``keys`` message, and whoever
may see the face unmasks it once every key is here. A card a seat shows from its own hand (a
move, a D3 claim, a disclosure) comes with the seat's own key, checked on the spot.

:class:`Reveals` holds what is owed and what this peer waits to see, and does every check a
key or a shown card needs; the play phase (:mod:`.play_phase`) decides when. Every failed
check is a :class:`~.phase.Violation` naming the sender: a key that does not match its key
point (``bad-key``), a point that opens to no card or to a card seen elsewhere (``bad-card``),
a position not in the sender's hand, a denied D3 card shown (``false-claim``, :mod:`.claims`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import CARD_TEXT
from ..engine import Game
from . import messages as m
from . import verdict as v
from .claims import ClaimBook
from .deck_phase import DeckPhase
from .phase import Host, Peer, Violation, Wait


class Reveals:
    """The key releases and faces of one game, for one peer (or an observer)."""

    def __init__(self, host: Host, claim_book: ClaimBook) -> None:
        self.host = host
        self.claim_book = claim_book
        self.owed: dict[tuple[int, int], float] = {}  # (seat, position) -> key due
        self.want_face: dict[int, int] = {}  # position -> -1 (public) or my seat

    def _table(self) -> tuple[Game, DeckPhase]:
        g, deck = self.host.game, self.host.deck
        assert g is not None and deck is not None
        return g, deck

    # ------------------------------------------------------------------ released keys

    def request(self) -> None:
        """Note every reveal the engine asked for: the keys each seat owes, the faces this
        peer will see, and this peer's own keys, released at once in one ``keys`` message."""
        g, deck = self._table()
        host = self.host
        me = host.my_seat
        mine: dict[int, bytes] = {}
        for pos, target in g.take_reveal_requests():
            for s in range(len(host.seats)):
                if s != target and (s, pos) not in deck.keys:
                    self.owed[(s, pos)] = 0.0
            if target == -1 or target == me:
                self.want_face[pos] = target
            if not host.is_observer and target != me and (me, pos) not in deck.keys:
                mine[pos] = deck.my_key(pos)
        if mine:
            host.send(m.KeysBody(keys=tuple(sorted(mine.items()))))

    def take_keys(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """A ``keys`` message: every key owed and valid, recorded, and the faces learnt."""
        host = self.host
        _, deck = self._table()
        seat = host.seat_of[peer.key]
        pairs = list(msg.body_as(m.KeysBody).keys)
        if not pairs:
            raise Violation(v.PROTOCOL, peer.key, "an empty key release", (frame,))
        if any(pos >= host.size for pos, _ in pairs):
            raise Violation(v.PROTOCOL, peer.key, "a key for a position beyond the deck", (frame,))
        if len({pos for pos, _ in pairs}) != len(pairs):
            raise Violation(v.PROTOCOL, peer.key, "a key release naming a position twice", (frame,))
        if any((seat, pos) not in self.owed for pos, _ in pairs):
            raise Wait  # not owed yet: this peer has not reached that draw
        for pos, key in pairs:
            if not deck.key_is_valid(seat, pos, key):
                raise Violation(
                    v.BAD_KEY,
                    peer.key,
                    f"its key for deck position {pos} does not match its key point",
                    (frame,),
                )
        for pos, key in pairs:
            del self.owed[(seat, pos)]
            deck.add_key(seat, pos, key)
        self.learn_faces(peer, frame)

    def learn_faces(self, peer: Peer | None, frame: bytes) -> None:
        """Unmask every position whose keys are all here and whose face this peer may see."""
        g, deck = self._table()
        me = self.host.my_seat
        for pos, target in list(self.want_face.items()):
            mine = {me: deck.my_key(pos)} if target == me >= 0 else None
            keys = deck.keys_for(pos, mine)
            if keys is None:
                continue
            card = self.open(pos, keys, peer, frame)
            del self.want_face[pos]
            if g.card_at(pos) < 0:
                g.reveal(pos, card)
            if target == -1:
                self.claim_book.seen.add(card)

    # ------------------------------------------------------------------ cards shown

    def face_down(self, seat: int) -> set[int]:
        """The positions in ``seat``'s hand whose faces are not public (the same set at
        every peer, the seat's own included)."""
        g, _ = self._table()
        return g.private_positions(seat)

    def shown_card(
        self, peer: Peer, seat: int, pos: int, key: bytes, frame: bytes, kind: str
    ) -> int:
        """The card ``seat`` shows from its hand at ``pos`` with its own ``key``."""
        g, deck = self._table()
        if pos >= self.host.size:
            raise Violation(kind, peer.key, f"deck position {pos} is beyond the deck", (frame,))
        face = g.card_at(pos)
        public_in_hand = face >= 0 and g.hand_mask(seat) >> face & 1  # e.g. the trump
        if not public_in_hand and pos not in self.face_down(seat):
            raise Violation(kind, peer.key, f"deck position {pos} is not in its hand", (frame,))
        if not deck.key_is_valid(seat, pos, key):
            raise Violation(
                v.BAD_KEY,
                peer.key,
                f"its key for position {pos} does not match its key point",
                (frame,),
            )
        keys = deck.keys_for(pos, {seat: key})
        if keys is None:
            raise Wait  # another peer's key for that draw has not arrived here yet
        return self.open(pos, keys, peer, frame)

    def open(self, pos: int, keys: Sequence[bytes], peer: Peer | None, frame: bytes) -> int:
        """Unmask ``pos``. With every pass proven and every key checked the point is always
        a card not seen elsewhere; if not, the proofs failed us: name who sent the keys."""
        g, deck = self._table()
        card = deck.open(pos, keys)
        if card is None or g.position_of(card) not in (-1, pos):
            sender = peer.key if peer is not None else b""
            what = "no card" if card is None else f"{CARD_TEXT[card]}, seen twice"
            raise Violation(v.BAD_CARD, sender, f"position {pos} opened to {what}", (frame,))
        return card

    def publish(self, seat: int, pos: int, card: int, key: bytes, frame: bytes) -> None:
        """``seat`` showed ``card`` at ``pos`` with its key: everyone knows it now; a D3
        denial it refutes is a verdict (claims.py)."""
        g, deck = self._table()
        if g.card_at(pos) < 0:
            g.reveal(pos, card)
        deck.add_key(seat, pos, key)
        denial = self.claim_book.shown(pos, card)
        if denial is not None:
            self.mark_shown(seat, card)
            raise Violation(
                v.FALSE_CLAIM,
                self.host.seats[denial.seat],
                f"said it had no {CARD_TEXT[denial.card]} (D3), then showed it from "
                f"position {pos}, which it held then",
                (denial.frame, frame),
            )

    def mark_shown(self, seat: int, card: int) -> None:
        """A card shown with its key that stays in the hand (a disclosure, a refuted
        denial) is public from now on, like a card taken from the table."""
        g, _ = self._table()
        if g.hand_mask(seat) >> card & 1:
            g.show(seat, card)

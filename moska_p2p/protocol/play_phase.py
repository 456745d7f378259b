"""The play phase of one game, sans-IO: the deal, moves, D3 claims, disclosure, result.

It owns the stages after the deck (:mod:`.stages`): ``play`` (``keys``, ``move`` and
``claim`` apply), ``disclose`` (only what a pending D3 denial needs) and ``result`` (every
peer signs the final state). The session (:mod:`.session`) hands it each message of those
kinds in its sender's order; a handler applies it, or raises :class:`~.phase.Wait` (not yet)
or :class:`~.phase.Violation` (a verdict naming the sender). Cards are opened by
:class:`~.reveals.Reveals`; the engine (``engine.Game``) decides what is legal and which
cards become due, so every check here is the engine's own, run on each peer's copy.

After every step of the engine (:meth:`PlayPhase.after_engine_step`) this peer releases the
keys it owes, learns the faces it may see, starts a D3 claim round when the rules ask for one
(RULES D3, settled by :mod:`.claims`), and ends the play once the game is over and no key is
owed.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from ..cards import CARD_TEXT
from ..engine import Game, IllegalMove, Move, new_hidden_game, parse_move
from ..engine.moves import ATTACK, BEG, EXCHANGE, KILL, SELF, TRANSFER, TRANSFER_SHOW
from . import messages as m
from . import verdict as v
from .claims import ClaimBook, Denial
from .phase import Handler, Host, Peer, Violation, Wait
from .reveals import Reveals
from .stages import DISCLOSE, DONE, PLAY, RESULT


def transcript_digest(frames: Sequence[bytes]) -> bytes:
    """The hash a peer signs in its result: every frame it processed, in order."""
    h = hashlib.sha256(b"moska-p2p/transcript\n")
    for frame in frames:
        h.update(struct.pack(">I", len(frame)))
        h.update(frame)
    return h.digest()


def hand_cards(g: Game, move: Move) -> list[int]:
    """The cards a move takes from the mover's hand (their faces are shown with it)."""
    kind, cards = move
    if kind == KILL:
        return [] if cards[1] == g.turned else [cards[1]]
    if kind in (ATTACK, SELF, TRANSFER, TRANSFER_SHOW):
        return list(cards)
    if kind == BEG:
        return [cards[1]]
    if kind == EXCHANGE:
        return [g.rules.lowest_rank * 4 + g.trump]
    return []


class PlayPhase:
    """The game from the deal to the result, for one peer (or an observer)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.game: Game | None = None
        self.moves: list[tuple[int, str]] = []
        self.past_states: set[str] = set()
        self.claim_rank = -1
        self.claims: dict[int, tuple[int, int] | None] = {}  # seat -> (position, card)
        self.claim_book = ClaimBook()
        self.reveals = Reveals(host, self.claim_book)
        self.disclosures: dict[int, set[int]] = {}  # seat -> positions it must disclose
        self.final_hash = ""
        self.losers: tuple[int, ...] = ()

    # ------------------------------------------------------------------ the stages

    def begin(self) -> None:
        """Every pass is in: the engine deals (its reveal requests start the key releases)."""
        host = self.host
        self.game = new_hidden_game(
            host.config.preset,
            len(host.seats),
            dealer=host.dealer,
            first_game=host.config.game == 1,  # D3: only a session's first game
            **dict(host.config.options),
        )
        self.after_engine_step()

    def advance(self) -> bool:
        """Move to the next stage when every peer has done its part; send what this peer
        owes then. Whether the stage changed."""
        host = self.host
        if host.stage == PLAY and self.game is not None and self.game.is_over:
            if not self.reveals.owed:
                self.end_of_play()
                return True
        elif host.stage == DISCLOSE and not self.disclosures:
            self.send_result()
            return True
        elif host.stage == RESULT and all(p.result is not None for p in host.peers.values()):
            host.enter(DONE)
            host.emit(v.Finished(self.losers, self.final_hash))
            return True
        return False

    def waiting_on(self) -> list[bytes]:
        """The peers this one waits for in the play and disclose stages (in seat order) and
        the result stage (in roster order)."""
        host = self.host
        if host.stage == PLAY:
            owing = {seat for seat, _ in self.reveals.owed}
            g = self.game
            if g is not None and g.to_act_seat >= 0 and not owing:
                owing.add(g.to_act_seat)
            if g is not None and g.awaiting_lowest_trump:
                owing |= {s for s in range(len(host.seats)) if s not in self.claims}
            return [host.seats[s] for s in sorted(owing)]
        if host.stage == DISCLOSE:
            return [host.seats[s] for s in sorted(self.disclosures)]
        if host.stage == RESULT:
            return [k for k in host.roster if host.peers[k].result is None]
        return []

    # ------------------------------------------------------------------ this peer's move

    def move_body(self, move: Move) -> m.MoveBody:
        """The ``move`` message of this peer's legal ``move``: its own key for every card
        the move shows from its hand."""
        g, deck = self.game, self.host.deck
        assert g is not None and deck is not None
        seat = self.host.my_seat
        cards = []
        for card in hand_cards(g, move):
            if not g.shown[seat] >> card & 1:
                pos = g.pos_of[card]
                cards.append((pos, deck.my_key(pos)))
        return m.MoveBody(move=str(move), state=bytes.fromhex(g.state_hash()), cards=tuple(cards))

    # ------------------------------------------------------------------ the handlers

    # The stage table (stages.py) hands each kind over in its own stage only: keys, moves
    # and claims in play, a disclosure in disclose, a result in result.

    def handlers(self) -> dict[str, Handler]:
        return {
            m.KEYS: self.on_keys,
            m.MOVE: self.on_move,
            m.CLAIM: self.on_claim,
            m.DISCLOSE: self.on_disclose,
            m.RESULT: self.on_result,
        }

    def on_keys(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        self.reveals.take_keys(peer, msg, frame)
        self.after_engine_step(learn=False)

    def on_move(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        g = self.game
        assert g is not None
        body = msg.body_as(m.MoveBody)
        state = body.state.hex()
        current = g.state_hash()
        if state != current:
            if state in self.past_states:
                raise Violation(
                    v.OUT_OF_TURN, peer.key, "a move for a state already past", (frame,)
                )
            raise Wait  # a state this peer has not reached yet
        seat = self.host.seat_of[peer.key]
        if g.to_act_seat != seat:
            raise Violation(
                v.OUT_OF_TURN,
                peer.key,
                f"moved out of turn (seat {g.to_act_seat} is to act)",
                (frame,),
            )
        try:
            move = parse_move(body.move)
        except ValueError as error:
            raise Violation(v.ILLEGAL_MOVE, peer.key, str(error), (frame,)) from None
        named = set(hand_cards(g, move))
        shown = []
        for pos, key in body.cards:
            card = self.reveals.shown_card(peer, seat, pos, key, frame, v.ILLEGAL_MOVE)
            if card not in named:
                raise Violation(
                    v.ILLEGAL_MOVE,
                    peer.key,
                    f"position {pos} holds {CARD_TEXT[card]}, which the move does not name",
                    (frame,),
                )
            shown.append((pos, card, key))
        trial = g.copy()
        for pos, card, _ in shown:
            trial.reveal(pos, card)
        try:
            trial.play(move, seat=seat)
        except IllegalMove as error:
            raise Violation(v.ILLEGAL_MOVE, peer.key, f"{move}: {error}", (frame,)) from None
        for pos, card, key in shown:
            self.reveals.publish(seat, pos, card, key, frame)
        self.past_states.add(current)
        g.play(move, seat=seat)
        self.moves.append((seat, str(move)))
        self.host.emit(v.Moved(seat, str(move)))
        self.after_engine_step()

    def on_claim(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        g = self.game
        assert g is not None
        if not g.awaiting_lowest_trump:
            raise Wait
        claim = msg.body_as(m.ClaimBody)
        rank = claim.rank
        seat = self.host.seat_of[peer.key]
        if rank > self.claim_rank or seat in self.claims:
            raise Wait
        if rank < self.claim_rank:
            raise Violation(v.PROTOCOL, peer.key, "a claim for a past round", (frame,))
        wanted = rank * 4 + g.trump
        card = claim.card
        if card is None:
            # D3 "none": checked later, from what the rules show anyway (claims.py).
            held = frozenset(self.reveals.face_down(seat))
            self.claim_book.deny(Denial(rank, seat, wanted, held, frame))
            self.claims[seat] = None
        else:
            pos, key = card
            face = self.reveals.shown_card(peer, seat, pos, key, frame, v.FALSE_CLAIM)
            if face != wanted:
                raise Violation(
                    v.FALSE_CLAIM,
                    peer.key,
                    f"claimed {CARD_TEXT[wanted]} but showed {CARD_TEXT[face]} (D3)",
                    (frame,),
                )
            self.claims[seat] = (pos, face)
            self.reveals.publish(seat, pos, face, key, frame)
        self.resolve_claims()

    def on_disclose(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        seat = self.host.seat_of[peer.key]
        due = self.disclosures.get(seat)
        keys = msg.body_as(m.DiscloseBody).keys
        pairs = dict(keys)
        if due is None or set(pairs) != due or len(pairs) != len(keys):
            raise Violation(
                v.PROTOCOL,
                peer.key,
                f"disclosed positions {sorted(pairs)}, not the ones due: {sorted(due or ())}",
                (frame,),
            )
        for pos, key in sorted(pairs.items()):
            card = self.reveals.shown_card(peer, seat, pos, key, frame, v.FALSE_CLAIM)
            self.reveals.publish(seat, pos, card, key, frame)
            self.reveals.mark_shown(seat, card)
        del self.disclosures[seat]

    def on_result(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        host = self.host
        if peer.result is not None:
            raise Violation(v.PROTOCOL, peer.key, "a second result", (frame,))
        body = msg.body_as(m.ResultBody)
        state = body.state.hex()
        losers = body.losers
        if state != self.final_hash or losers != self.losers:
            raise Violation(
                v.DISAGREEMENT, peer.key, "its result differs from this peer's", (frame,)
            )
        before = host.transcript[: host.transcript.index(frame)]
        if peer.key == host.me and body.transcript != transcript_digest(before):
            raise Violation(v.PROTOCOL, peer.key, "its transcript hash is wrong", (frame,))
        peer.result = (body.transcript, losers)

    # ------------------------------------------------------------------ after each step

    def after_engine_step(self, learn: bool = True) -> None:
        g = self.game
        assert g is not None
        self.reveals.request()
        if learn and self.reveals.want_face:
            self.reveals.learn_faces(None, b"")
            self.after_engine_step(learn=False)
        if g.awaiting_lowest_trump and self.claim_rank < 0:
            self.claim_rank = g.rules.lowest_rank
            self.claims = {}
            self.host.send_claim()
        if g.is_over and self.host.stage == PLAY and not self.reveals.owed:
            self.end_of_play()

    def send_claim(self) -> None:
        """This peer's D3 claim for the round under way: its lowest trump of the round's rank,
        shown with its key, or "none"."""
        g, deck = self.game, self.host.deck
        if self.host.is_observer or g is None or deck is None:
            return
        me = self.host.my_seat
        card = self.claim_rank * 4 + g.trump
        shown: m.KeyPair | None = None
        if g.hands[me] >> card & 1:
            pos = g.pos_of[card]
            shown = (pos, deck.my_key(pos))
        self.host.send(m.ClaimBody(rank=self.claim_rank, card=shown))

    def resolve_claims(self) -> None:
        g = self.game
        assert g is not None
        if len(self.claims) < len(self.host.seats):
            return
        shown = [(s, c) for s, c in sorted(self.claims.items()) if c is not None]
        if shown:
            _, (pos, _card) = shown[0]
            g.declare_lowest_trump(pos)
        elif self.claim_rank >= 12:
            g.declare_lowest_trump(None)
        else:
            self.claim_rank += 1
            self.claims = {}
            self.host.send_claim()
            return
        self.claim_rank = -1
        self.after_engine_step()

    # ------------------------------------------------------------------ the end

    def end_of_play(self) -> None:
        """The game is over: settle pending D3 denials by disclosure, then the result."""
        host = self.host
        held = {s: self.reveals.face_down(s) for s in range(len(host.seats))}
        self.disclosures = self.claim_book.due(held)
        host.enter(DISCLOSE)
        if not host.is_observer and host.my_seat in self.disclosures and host.deck is not None:
            due = sorted(self.disclosures[host.my_seat])
            host.send(m.DiscloseBody(keys=tuple((pos, host.deck.my_key(pos)) for pos in due)))

    def send_result(self) -> None:
        g = self.game
        assert g is not None
        host = self.host
        self.final_hash = g.state_hash()
        self.losers = g.loser_seats
        host.enter(RESULT)
        if not host.is_observer:
            host.send(
                m.ResultBody(
                    state=bytes.fromhex(self.final_hash),
                    losers=tuple(self.losers),
                    transcript=transcript_digest(host.transcript),
                )
            )

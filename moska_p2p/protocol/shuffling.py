"""The deck stages of one game: whose shuffle pass is due, and this peer's own.

:class:`~.deck_phase.DeckPhase` checks each pass against its proof and holds the deck; this
component says *when*: passes go in seat order, every seat's ``shuffle1`` then every seat's
``shuffle2`` (PROTOCOL.md §10), a later seat's pass waits for the earlier ones, and this
peer sends its own when its turn comes. It owns the ``shuffle1`` and ``shuffle2`` stages
(:mod:`.stages`); when the last pass is in, the play phase deals.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..crypto import deck as mp
from . import messages as m
from . import verdict as v
from .deck_phase import STAGE_PASS1, STAGE_PASS2, DeckPhase
from .phase import Handler, Host, Peer, Violation, Wait
from .stages import PLAY, SHUFFLE1, SHUFFLE2


class Shuffling:
    """The turns of the two passes, for one peer (or an observer, who sends none)."""

    def __init__(self, host: Host, seed: bytes, cards: Sequence[int]) -> None:
        self.host = host
        self.seed = seed
        self.cards = list(cards)
        self.deck: DeckPhase | None = None
        self.offload = False
        """Set by a driver that runs the deck's costly steps itself, off its event loop
        (:meth:`.PeerSession.take_jobs`, :meth:`.PeerSession.finish_job`; :mod:`.deck_phase`):
        a pass then waits in its sender's queue while its check runs, and this seat's own pass
        is made from the previous output in parallel, sent only once that output passed."""

    def begin(self) -> None:
        """The seats are drawn: derive this seat's deck secrets, and shuffle if first."""
        host = self.host
        assert host.game_id is not None
        secrets = None
        if not host.is_observer:
            secrets = mp.DeckSecrets.from_seed(
                self.seed, host.game_id, host.my_seat, len(self.cards)
            )
        self.deck = DeckPhase(host.game_id, len(host.seats), self.cards, secrets)
        self.my_pass()

    def advance(self) -> bool:
        """Pass 1 complete: pass 2 begins. Pass 2 complete: the play begins."""
        host = self.host
        if self.deck is None:
            return False
        turn = self.deck.next_turn()
        if turn is None:
            host.enter(PLAY)
            return True
        if host.stage == SHUFFLE1 and turn[0] != STAGE_PASS1:
            host.enter(SHUFFLE2)
            self.my_pass()
            return True
        return self.my_pass()

    def waiting_on(self) -> list[bytes]:
        """The seat whose pass is due (nobody while a pass is being checked or made here:
        that wait is this peer's own work, not anyone's silence)."""
        deck = self.deck
        turn = deck.next_turn() if deck is not None else None
        if deck is None or turn is None or deck.busy:
            return []
        return [self.host.seats[turn[1]]]

    def handlers(self) -> dict[str, Handler]:
        return {m.SHUFFLE1: self.on_shuffle1, m.SHUFFLE2: self.on_shuffle2}

    def on_shuffle1(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        self._step(peer, SHUFFLE1, msg, frame)

    def on_shuffle2(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        self._step(peer, SHUFFLE2, msg, frame)

    def _step(self, peer: Peer, stage: int, msg: m.Message, frame: bytes) -> None:
        """Passes go in seat order: a later seat's pass waits for the earlier ones; each is
        checked against its proof before anything builds on it."""
        deck = self.deck
        assert deck is not None  # the stage table hands a pass over in its own stage only
        turn = deck.next_turn()
        seat = self.host.seat_of[peer.key]
        if turn is not None and seat > turn[1]:
            raise Wait
        if turn is None or turn[1] != seat:
            raise Violation(v.PROTOCOL, peer.key, "a shuffle pass out of its turn", (frame,))
        body: m.Shuffle1Body | m.Shuffle2Body = (
            msg.body_as(m.Shuffle1Body) if stage == SHUFFLE1 else msg.body_as(m.Shuffle2Body)
        )
        try:
            verified = False
            if self.offload:  # checked off the loop: wait for the job, then accept
                verified = deck.check(
                    seat, STAGE_PASS1 if stage == SHUFFLE1 else STAGE_PASS2, body, msg.hash
                )
                if not verified:
                    raise Wait
            if isinstance(body, m.Shuffle1Body):
                deck.accept_pass1(seat, body, verified=verified)
            else:
                deck.accept_pass2(seat, body, verified=verified)
        except mp.DeckError as error:
            raise Violation(v.BAD_SHUFFLE, peer.key, f"a bad shuffle: {error}", (frame,)) from None

    def my_pass(self) -> bool:
        """Send this peer's pass if it is its turn; whether it did."""
        host = self.host
        deck = self.deck
        if host.is_observer or deck is None:
            return False
        turn = deck.next_turn()
        if turn is None or turn[1] != host.my_seat:
            return False
        if self.offload:  # made off the loop (or by the pipeline): sent once it is here
            body = deck.my_pass(host.my_seat)
            if body is not None:
                host.send(body)
            return body is not None
        if turn[0] == STAGE_PASS1:
            host.send(deck.make_pass1(host.my_seat))
        else:
            host.send(deck.make_pass2(host.my_seat))
        return True

"""The proven deck of one game, sans-IO: both shuffle passes and every key release.

The session decides *when* a pass or a key is due (turn order, which reveal the engine asked
for); this component decides *whether* what arrived is right, and holds the deck's public
state: every pass's output, every seat's public pass-1 scalar ``A_s`` and key points
``K_s[j]``, and every key released so far (PROTOCOL.md, "The deck").

Every check here is local and immediate: a pass is verified against its proof when it
arrives, a key against its key point when it arrives, so a cheat is named at the message that
carries it, and nothing waits for an end-of-game audit. A failed check raises
:class:`~moska_p2p.crypto.deck.DeckError`; the session turns it into a verdict naming the
sender with the signed frame as evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..crypto import deck as mp

STAGE_PASS1 = "shuffle1"
STAGE_PASS2 = "shuffle2"


class DeckPhase:
    """The deck's public state and the local seat's secrets (none for an observer)."""

    def __init__(
        self,
        game_id: bytes,
        seats: int,
        cards: Sequence[int],
        secrets: mp.DeckSecrets | None,
    ) -> None:
        self.game_id = game_id
        self.seats = seats
        self.cards = list(cards)
        self.size = len(self.cards)
        self.initial = mp.card_points(game_id, self.cards)
        self.table = dict(zip(self.initial, self.cards, strict=True))
        self.secrets = secrets
        self.pass1: list[list[bytes]] = []
        self.scalars: list[bytes] = []
        self.pass2: list[list[bytes]] = []
        self.key_points: list[list[bytes]] = []
        self.keys: dict[tuple[int, int], bytes] = {}
        # What this seat's own make_pass1/make_pass2 computed, as an immutable copy: a pass
        # that arrives byte for byte as made here needs no proof check (see _made_here).
        self._made: dict[str, tuple[object, ...]] = {}

    # ------------------------------------------------------------------ the passes

    def context(self, seat: int, stage: str) -> bytes:
        return mp.deck_context(self.game_id, seat, stage)

    @property
    def shuffled(self) -> bool:
        return len(self.pass2) == self.seats

    def next_turn(self) -> tuple[str, int] | None:
        """Which pass is due and whose (seat order, pass 1 first); ``None`` when done."""
        if len(self.pass1) < self.seats:
            return STAGE_PASS1, len(self.pass1)
        if len(self.pass2) < self.seats:
            return STAGE_PASS2, len(self.pass2)
        return None

    def _pass1_input(self) -> list[bytes]:
        return self.pass1[-1] if self.pass1 else self.initial

    def _pass2_input(self) -> list[bytes]:
        return self.pass2[-1] if self.pass2 else self.pass1[-1]

    def accept_pass1(self, seat: int, body: dict[str, Any]) -> None:
        """Check ``seat``'s pass-1 output against its shuffle argument, then keep it."""
        assert self.next_turn() == (STAGE_PASS1, seat)
        points, scalar, proof = list(body["points"]), body["scalar"], body["proof"]
        if not self._made_here(
            STAGE_PASS1, seat, (tuple(self._pass1_input()), tuple(points), scalar, proof)
        ):
            mp.verify_pass1(
                self.context(seat, STAGE_PASS1), self._pass1_input(), points, scalar, proof
            )
        self.pass1.append(points)
        self.scalars.append(scalar)

    def accept_pass2(self, seat: int, body: dict[str, Any]) -> None:
        """Check ``seat``'s pass-2 output against its re-keying proof, then keep it."""
        assert self.next_turn() == (STAGE_PASS2, seat)
        points, key_points, proof = list(body["points"]), list(body["keys"]), body["proof"]
        if len(key_points) != self.size:
            raise mp.DeckError(f"{len(key_points)} key points, not {self.size}")
        received = (tuple(self._pass2_input()), tuple(points), tuple(key_points), proof)
        if not self._made_here(STAGE_PASS2, seat, received):
            mp.verify_pass2(
                self.context(seat, STAGE_PASS2),
                self._pass2_input(),
                points,
                self.scalars[seat],
                key_points,
                proof,
            )
        self.pass2.append(points)
        self.key_points.append(key_points)

    def make_pass1(self, seat: int) -> dict[str, Any]:
        """This seat's pass-1 message body: its output, ``A_s`` and the shuffle argument."""
        assert self.secrets is not None
        source = self._pass1_input()
        points, proof = mp.pass1(self.secrets, self.context(seat, STAGE_PASS1), source)
        made = (seat, tuple(source), tuple(points), self.secrets.public_scalar, proof)
        self._made[STAGE_PASS1] = made
        return {"scalar": self.secrets.public_scalar, "points": points, "proof": proof}

    def make_pass2(self, seat: int) -> dict[str, Any]:
        """This seat's pass-2 message body: its output, key points and re-keying proof."""
        assert self.secrets is not None
        source = self._pass2_input()
        points, key_points, proof = mp.pass2(self.secrets, self.context(seat, STAGE_PASS2), source)
        self._made[STAGE_PASS2] = (seat, tuple(source), tuple(points), tuple(key_points), proof)
        return {"points": points, "keys": key_points, "proof": proof}

    def _made_here(self, stage: str, seat: int, received: tuple[object, ...]) -> bool:
        """Whether ``received`` is exactly the pass this seat's own secrets just made for
        ``seat`` and ``stage`` from the same input (an immutable copy, taken before the message
        leaves make_pass*, so nothing done to the message afterwards can change it).

        Such a pass was computed here by the honest code, so its proof holds: checking it
        again is a sixth of a 6-peer deal's verification for nothing. Anything else, a body
        changed on its way out by a modified client included, differs in some byte and is
        checked as every other seat's pass is, so a cheat still convicts itself.
        """
        made = self._made.get(stage)
        return made is not None and made == (seat, *received)

    # ------------------------------------------------------------------ keys and faces

    @property
    def final(self) -> list[bytes]:
        """The dealt deck: position ``j`` is ``card * prod_s k_s[j]``."""
        return self.pass2[-1]

    def my_key(self, pos: int) -> bytes:
        assert self.secrets is not None
        return self.secrets.keys[pos]

    def key_is_valid(self, seat: int, pos: int, key: bytes) -> bool:
        """A released key is valid when ``key * B`` is the key point the seat committed to
        with its pass 2 (whose proof bound that point to the position's masking)."""
        return 0 <= pos < self.size and mp.check_key(key, self.key_points[seat][pos])

    def add_key(self, seat: int, pos: int, key: bytes) -> None:
        self.keys[(seat, pos)] = key

    def keys_for(self, pos: int, extra: dict[int, bytes] | None = None) -> list[bytes] | None:
        """Every seat's key for ``pos`` (from releases, then ``extra``), or ``None`` while
        one is missing."""
        out = []
        for seat in range(self.seats):
            key = (extra or {}).get(seat) or self.keys.get((seat, pos))
            if key is None:
                return None
            out.append(key)
        return out

    def open(self, pos: int, keys: Sequence[bytes]) -> int | None:
        """The card at ``pos`` under every seat's key, or ``None`` if the point is no card
        (impossible after verified passes and checked keys; the caller names a culprit)."""
        try:
            point = mp.unmask(self.final[pos], list(keys))
        except mp.DeckError:
            return None
        return self.table.get(point)

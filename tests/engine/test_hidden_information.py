"""Hidden information (DESIGN.md "The engine"; RULES C5).

Every seat runs an engine that starts with no face known and learns only what that seat may
see: its own draws, public turns, and the cards of each move as they are played. These engines
must stay in step with the full-information game at every move (same seat to act, same
decision, same public-state hash), never know a card of another hand that is not public, and
the acting seat's own engine must list exactly the full game's legal moves.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from moska_p2p.engine import PRESETS, Game, Move, new_game, new_hidden_game
from moska_p2p.engine.moves import ATTACK, BEG, EXCHANGE, KILL, SELF, TRANSFER, TRANSFER_SHOW


def _deliver(full: Game, engines: list[Game]) -> None:
    """Release every key that is due: private draws to their owner, public turns to all."""
    progress = True
    while progress:
        progress = False
        for seat, engine in enumerate(engines):
            for pos, owner in engine.take_reveal_requests():
                if owner in (-1, seat):
                    engine.reveal(pos, full.face[pos])
                    progress = True
        for engine in engines:
            if engine.awaiting_lowest_trump:
                # D3: the holder shows the lowest trump (the full game knows who).
                shown = _lowest_trump_position(full)
                if shown is not None:
                    for other in engines:
                        other.reveal(shown, full.face[shown])
                engine.declare_lowest_trump(shown)
                progress = True


def _lowest_trump_position(full: Game) -> int | None:
    trumps = [
        c
        for seat in range(full.n)
        for c in range(52)
        if full.hands[seat] >> c & 1
        if c & 3 == full.trump
    ]
    return full.pos_of[min(trumps)] if trumps else None


def _cards_from_hand(full: Game, move: Move) -> list[int]:
    """The cards a move shows from the mover's hand (their keys come with the move)."""
    kind, cards = move
    if kind == KILL:
        return [cards[1]]
    if kind in (ATTACK, SELF, TRANSFER, TRANSFER_SHOW):
        return list(cards)
    if kind == BEG:
        return [cards[1]]
    if kind == EXCHANGE:
        low = (full.rules.lowest_rank * 4) + full.trump
        return [low]
    return []


def _check_in_step(full: Game, engines: list[Game]) -> None:
    expected = full.state_hash()
    for seat, engine in enumerate(engines):
        assert engine.to_act_seat == full.to_act_seat
        assert engine.decision == full.decision
        assert engine.state_hash() == expected, f"seat {seat}'s engine left the full game"
        assert engine.hands[seat] == full.hands[seat]
        assert not engine.hidden[seat], f"seat {seat} does not know its own hand"
        for other in range(full.n):
            if other != seat:
                # No leak: of another hand this seat knows exactly the public cards.
                assert engine.hands[other] == full.shown[other]


def play_in_step(preset: str, players: int, seed: int, max_moves: int = 3000) -> Game:
    full = new_game(preset, players=players, seed=seed)
    engines = [new_hidden_game(preset, players, dealer=full.dealer) for _ in range(players)]
    _deliver(full, engines)
    rng = random.Random(seed)
    for _ in range(max_moves):
        _check_in_step(full, engines)
        if full.is_over:
            break
        actor = full.to_act_seat
        assert actor is not None
        legal = full.legal_moves()
        assert set(engines[actor].legal_moves()) == set(legal)
        move = rng.choice(legal)
        shown = [c for c in _cards_from_hand(full, move) if full.turned != c]
        for engine in engines:
            for card in shown:
                engine.reveal(full.pos_of[card], card)
            engine.play(move, seat=actor)
        full.play(move)
        _deliver(full, engines)
    assert full.is_over
    for engine in engines:
        assert engine.is_over and list(engine.loser_seats) == list(full.loser_seats)
    return full


@settings(max_examples=40)
@given(
    preset=st.sampled_from(PRESETS),
    players=st.integers(min_value=2, max_value=6),
    seed=st.integers(min_value=0, max_value=10**6),
)
def test_seat_engines_stay_in_step_with_the_full_game(preset: str, players: int, seed: int) -> None:
    if preset == "durak-teams":
        players = 4 if players < 6 else 6
    play_in_step(preset, players, seed)


def test_every_preset_in_step_with_four_players() -> None:
    for preset in PRESETS:
        play_in_step(preset, 4, seed=11)


def test_hidden_engine_waits_for_the_trump_indicator() -> None:
    """C4/M3: the indicator is a public reveal; until it comes nobody can act."""
    g = new_hidden_game("moska", 4, dealer=0)
    assert g.to_act_seat < 0 and not g.is_over
    assert g.awaiting == (24,)
    requests = g.take_reveal_requests()
    assert (24, -1) in requests
    assert sorted(pos for pos, seat in requests if seat == 1) == [0, 4, 8, 12, 16, 20]
    g.reveal(24, "7H")
    assert g.trump_card == "7H"
    assert g.to_act_seat == 1 and g.decision == "open"

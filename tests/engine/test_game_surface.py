"""A game's state is its own: read through properties, changed through verbs only.

The protocol once wrote a hand's shown cards straight into the engine's lists; these tests
hold the engine to its surface: a list read from a game is a copy, no attribute can be
assigned, and the protocol's needs (a card shown, the card at a position, a card's
position, a hand's private positions) are verbs with the same answers as the state.
"""

from __future__ import annotations

import random

import pytest

from moska_p2p.cards import parse_card
from moska_p2p.engine import (
    ATTACK,
    BEG,
    EXCHANGE,
    KILL,
    SELF,
    TRANSFER,
    TRANSFER_SHOW,
    Game,
    Move,
    RevealError,
    new_game,
    new_hidden_game,
    stack_deck,
)


def _played(preset: str, seed: int, moves: int) -> Game:
    g = new_game(preset, 4, seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if g.is_over:
            break
        g.play(g.random_move(rng))
    return g


@pytest.mark.parametrize(
    "name",
    ["face", "pos_of", "hands", "shown", "out", "stock", "history", "public", "tab_a", "tab_k"],
)
def test_a_sequence_read_from_a_game_is_a_snapshot_no_write_reaches(name: str) -> None:
    g = _played("moska", 3, 12)
    assert g.tab_a, "a bout under way: every sequence has something in it"
    before = g.state_hash()
    snapshot = getattr(g, name)
    assert isinstance(snapshot, tuple)
    with pytest.raises(TypeError):
        snapshot[0] = -7  # type: ignore[index]
    assert g.state_hash() == before
    kept = list(snapshot)
    g.play(g.legal_moves()[0])
    assert list(snapshot) == kept  # the game moving on does not reach it either


def test_no_field_of_a_game_can_be_assigned() -> None:
    g = _played("durak", 4, 5)
    for name in ("phase", "to_act_seat", "hands", "trump", "attacker", "stock"):
        with pytest.raises(AttributeError):
            setattr(g, name, 0)


def test_the_hidden_places_read_from_a_game_take_no_write() -> None:
    g = new_hidden_game("moska", 4, dealer=0)
    assert [len(h) for h in g.hidden] == [6, 6, 6, 6]
    with pytest.raises(AttributeError):
        g.hidden[1].clear()  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        g.hidden_owner[0] = 3  # type: ignore[index]
    assert len(g.hidden_owner) == 24


def test_card_at_and_position_of_answer_from_the_state() -> None:
    g = _played("moska", 5, 8)
    face = g.face
    for pos, card in enumerate(face):
        assert g.card_at(pos) == card
        assert g.position_of(card) == pos
    hidden = new_hidden_game("moska", 4, dealer=1)
    assert hidden.card_at(0) == -1
    assert hidden.position_of(parse_card("AS")) == -1


def test_show_makes_a_held_card_public_and_refuses_one_not_held() -> None:
    deck = stack_deck("moska", 2, {1: ["AS", "KH"], 0: ["2C"]}, dealer=0)
    g = new_game("moska", 2, deck=deck)
    ace = parse_card("AS")
    assert not g.shown[1] >> ace & 1
    assert g.position_of(ace) in g.private_positions(1)
    before = g.state_hash()
    g.show(1, ace)
    assert g.shown[1] >> ace & 1
    assert g.position_of(ace) not in g.private_positions(1)
    assert g.state_hash() != before  # shown cards are public state
    with pytest.raises(RevealError):
        g.show(0, ace)


def test_private_positions_of_a_peer_engine_are_its_unknown_and_unshown_cards() -> None:
    full = new_game("durak", 4, seed=2, dealer=0)
    peer = new_hidden_game("durak", 4, dealer=0)
    for pos, seat in peer.take_reveal_requests():
        if seat == 2:
            peer.reveal(pos, full.card_at(pos))
    for seat in range(4):
        positions = peer.private_positions(seat)
        assert len(positions) == peer.hand_size(seat)
        if seat != 2:
            assert positions == {p for p, s in peer.hidden_owner.items() if s == seat}
        else:
            assert all(peer.card_at(p) >= 0 for p in positions)


def _hand_cards(full: Game, move: Move) -> list[int]:
    """The cards a move lays or shows from the mover's hand (a peer learns them with it)."""
    kind, cards = move
    if kind in (KILL, BEG):
        return [cards[1]]
    if kind in (ATTACK, SELF, TRANSFER, TRANSFER_SHOW):
        return list(cards)
    if kind == EXCHANGE:
        return [full.rules.lowest_rank * 4 + full.trump]
    return []


def test_nobody_is_to_act_while_a_card_turned_by_m23_is_unknown() -> None:
    """M23 on a peer's engine: once the second-last stock card is turned face up, no seat is
    to act until its face is known to all, by ``to_act_seat`` as by ``legal_moves``."""
    options = {"expose_second_last": "on", "trump_exchange": "never"}
    full = new_game("moska", 3, seed=11, dealer=0, **options)
    peer = new_hidden_game("moska", 3, dealer=0, **options)
    rng = random.Random(11)
    withheld: list[int] = []
    for _ in range(400):
        for pos, owner in peer.take_reveal_requests():
            exposed = owner == -1 and len(peer.stock) == 2 and pos == peer.stock[-1]
            if exposed and not withheld:
                withheld.append(pos)
            elif owner in (-1, 0) or exposed:
                peer.reveal(pos, full.card_at(pos))
        if withheld:
            break
        if full.is_over:
            break
        assert peer.to_act_seat == full.to_act_seat
        move = full.random_move(rng)
        for card in _hand_cards(full, move):
            peer.reveal(full.position_of(card), card)
        peer.play(move, seat=full.to_act_seat)
        full.play(move)
    assert withheld, "the game never exposed its second-last stock card"
    assert full.to_act_seat >= 0
    assert peer.to_act_seat == -1 and peer.legal_moves() == []
    assert peer.view(0).to_act is None
    peer.reveal(withheld[0], full.card_at(withheld[0]))
    assert peer.to_act_seat == full.to_act_seat
    assert peer.state_hash() == full.state_hash()

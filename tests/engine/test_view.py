"""Game.view(seat): what a seat may see (DESIGN.md: bots get views, never the full state)."""

from __future__ import annotations

import pytest

from moska_p2p.engine import new_game, stack_deck

HANDS = {0: "2C 5D 9H JS QS AC", 1: "3H 3S 7D 8D KC KH", 2: "4C 4D 6H 10S JD AD"}


def _game():  # type: ignore[no-untyped-def]
    deck = stack_deck("moska", 3, HANDS, dealer=2, indicator="7H", stock=["2S", "9C"])
    return new_game("moska", 3, deck=deck, dealer=2)


def test_view_shows_own_hand_and_public_table_only() -> None:
    g = _game()
    v = g.view(1)
    assert v.seat == 1 and v.players == 3 and v.preset == "moska"
    assert v.hand == ["3H", "3S", "7D", "8D", "KC", "KH"]
    assert v.known_cards(0) == [] and v.known_cards(2) == []
    assert v.known_cards(1) == v.hand
    assert v.trump == "H" and v.trump_card == "7H"
    assert v.stock_size == 52 - 18
    assert v.stock_known == [(0, 5 * 4 + 2)]  # the indicator 7H, at the bottom
    assert v.hand_sizes == [6, 6, 6]
    assert v.to_act == 0 and v.decision == "open"
    assert v.attacker == 0 and v.defender == 1


def test_picked_up_cards_are_known_to_everyone() -> None:
    g = _game()
    g.play("attack 2C")
    g.play("take")  # M12: seat 1 takes the 2C
    while g.decision == "give":
        g.play("pass")
    for seat in range(3):
        assert "2C" in g.view(seat).known_cards(1)
    assert g.view(0).known_cards(2) == []


def test_view_is_a_snapshot_with_history() -> None:
    g = _game()
    v = g.view(0)
    g.play("attack 2C")
    assert v.hand == ["2C", "5D", "9H", "JS", "QS", "AC"]
    assert v.history == []
    w = g.view(0)
    assert [(s, str(m)) for s, m in w.history] == [(0, "attack 2C")]
    assert w.table == [("2C", None)] and w.live_cards == ["2C"]
    assert w.hand_sizes == [6, 6, 6]  # seat 0 refilled at once (M8)


def test_view_of_a_missing_seat_is_refused() -> None:
    with pytest.raises(ValueError, match="no seat 5"):
        _game().view(5)

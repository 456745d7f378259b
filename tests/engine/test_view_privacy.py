"""A view holds only what its seat may know (RULES C5).

Two deals that differ only in cards hidden from seat ``s`` must give ``s`` views that pickle
to the same bytes and encode to the same JSON for external bots; a difference in ``s``'s own
hand must show. ``View.determinize`` samples from the view's own data and never gives a seat
a card it cannot hold, on the arena's game and on a network peer's partial engine alike.
"""

from __future__ import annotations

import copy
import gc
import json
import pickle
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hidden_information import _cards_from_hand, _deliver

from moska_p2p.bots.encoding import encode_view
from moska_p2p.bots.external import view_json
from moska_p2p.cards import cards_list
from moska_p2p.engine import PRESETS, Game, IllegalMove, Move, View, new_game, new_hidden_game
from moska_p2p.engine.knowledge import DeterminizeError

# Presets of every family (moska, durak, mustamaija, kaavi) at their defaults, and option
# values that reach the states the defaults never do: M22's turned card, M23's face-up stock
# card, M20/M21 self execution, D11 by showing a trump.
CASES: list[tuple[str, dict[str, Any]]] = [(preset, {}) for preset in PRESETS] + [
    ("moska", {"deck_kill": "on", "self_execution": "on-with-draw"}),
    ("moska", {"expose_second_last": "on", "limit": "hand"}),
    ("taraki-mm", {"deck_kill": "on", "expose_second_last": "on"}),
    ("perevodnoy", {"transfer_show_trump": "on"}),
]


def _players(preset: str, seed: int) -> int:
    return 4 if preset == "durak-teams" else 2 + seed % 5


def _play(
    deck: list[int], preset: str, players: int, dealer: int, opts: dict[str, Any], moves: list[Move]
) -> Game | None:
    """The game of ``deck`` after ``moves``, or None if a move is not legal there."""
    g = new_game(preset, players, deck=deck, dealer=dealer, **opts)
    for move in moves:
        try:
            g.play(move)
        except IllegalMove:
            return None
    return g


def _random_moves(g: Game, count: int, rng: random.Random) -> list[Move]:
    moves: list[Move] = []
    while len(moves) < count and not g.is_over:
        moves.append(g.play(g.random_move(rng)))
    return moves


def _view_bytes(view: View) -> tuple[bytes, str, list[float]]:
    return pickle.dumps(view), json.dumps(view_json(view), sort_keys=True), encode_view(view)


def _other_deal(
    a: Game,
    preset: str,
    opts: dict[str, Any],
    moves: list[Move],
    seat: int,
    rng: random.Random,
    swap_own: bool,
) -> Game | None:
    """A deal that differs from ``a``'s only in cards ``seat`` has never seen (or, with
    ``swap_own``, in one card of its own hand too), replayed through the same moves; None
    when no such deal keeps every move legal and the public state the same (D3 can tell
    that no lower trump was dealt)."""
    unknown = cards_list(a.unknown_to(seat))
    if len(unknown) < 2:
        return None
    for _ in range(50):
        deck = list(a.face)
        if swap_own:
            own = [c for c in cards_list(a.hands[seat] & ~a.shown[seat])]
            if not own:
                return None
            mine, theirs = rng.choice(own), rng.choice(unknown)
            pm, pt = a.pos_of[mine], a.pos_of[theirs]
            deck[pm], deck[pt] = theirs, mine
        else:
            cards = list(unknown)
            while cards == unknown:
                rng.shuffle(cards)
            for card, new in zip(unknown, cards, strict=True):
                deck[a.pos_of[card]] = new
        b = _play(deck, preset, a.n, a.dealer, opts, moves)
        if b is not None and b.state_hash() == a.state_hash():
            return b
    return None


@pytest.mark.parametrize(("preset", "opts"), CASES)
def test_views_of_deals_differing_only_in_hidden_cards_are_identical(
    preset: str, opts: dict[str, Any]
) -> None:
    compared = 0
    for seed in range(6):
        rng = random.Random(seed)
        players = _players(preset, seed)
        for count in (0, 3, 12, 40):
            a = new_game(preset, players, seed=seed, **opts)
            moves = _random_moves(a, count, rng)
            for seat in range(players):
                b = _other_deal(a, preset, opts, moves, seat, rng, swap_own=False)
                if b is None:
                    continue
                assert b.face != a.face and b.hands != a.hands
                assert _view_bytes(a.view(seat)) == _view_bytes(b.view(seat))
                compared += 1
    assert compared >= 20


@pytest.mark.parametrize("preset", PRESETS)
def test_views_differ_when_the_seats_own_hand_differs(preset: str) -> None:
    compared = 0
    for seed in range(6):
        rng = random.Random(seed)
        players = _players(preset, seed)
        for count in (0, 5):
            a = new_game(preset, players, seed=seed)
            moves = _random_moves(a, count, rng)
            seat = seed % players
            b = _other_deal(a, preset, {}, moves, seat, rng, swap_own=True)
            if b is None:
                continue
            va, vb = a.view(seat), b.view(seat)
            pa, ja, ea = _view_bytes(va)
            pb, jb, eb = _view_bytes(vb)
            assert pa != pb and ja != jb and ea != eb
            compared += 1
    assert compared >= 4


def _reachable(root: object) -> list[object]:
    seen: dict[int, object] = {}
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen[id(obj)] = obj
        todo.extend(gc.get_referents(obj))
        if hasattr(type(obj), "__slots__"):
            todo.extend(getattr(obj, name) for name in _slots(obj) if hasattr(obj, name))
    return list(seen.values())


def _slots(obj: object) -> list[str]:
    return [name for cls in type(obj).__mro__ for name in getattr(cls, "__slots__", ())]


def test_a_view_holds_no_part_of_the_live_game() -> None:
    """No reference to the game or to any of its (mutable) lists: a view taken now does not
    grow when the game goes on, and shows no later move."""
    g = new_game("moska", 4, seed=3)
    rng = random.Random(3)
    _random_moves(g, 10, rng)
    view = g.view(g.to_act_seat)
    view.determinize(rng)  # fills the view's cache: still nothing of the live game
    live = {id(g)} | {id(getattr(g, name)) for name in _slots(g)}
    live |= {id(x) for x in g.hidden} | {id(g.history)}
    shared = [
        obj
        for obj in _reachable(view)
        if (id(obj) in live and isinstance(obj, (list, dict, Game))) or obj is g
    ]
    assert shared == []
    before = pickle.dumps(view)
    history = view.history
    _random_moves(g, 30, rng)
    assert pickle.dumps(view) == before
    assert view.history == history and len(g.history) == len(history) + 30


def test_the_pickle_holds_no_game_and_no_unseen_card() -> None:
    g = new_game("durak", 3, seed=5)
    view = g.view(0)
    view.determinize(random.Random(0))
    again = pickle.loads(pickle.dumps(view))
    assert not [obj for obj in _reachable(again) if isinstance(obj, Game)]
    assert pickle.dumps(again) == pickle.dumps(g.view(0))
    # Every card code an unpickled view holds is one the seat may know.
    known = g.hands[0] | g.discard | sum(g.shown) | (1 << g.indicator)
    codes = {c for c in cards_list(known)}
    assert {c for _, c in again.stock_known} <= codes
    assert again.hand_mask == g.hands[0]
    assert all(m & ~known == 0 for m in again.known_mask)


def _places(g: Game) -> list[int]:
    """Every card's place as a list of card codes, one entry per card held anywhere."""
    cards: list[int] = []
    for s in range(g.n):
        cards += cards_list(g.hands[s])
    for a, k in zip(g.tab_a, g.tab_k, strict=True):
        cards.append(a)
        if k >= 0:
            cards.append(k)
    cards += cards_list(g.discard)
    cards += [g.face[pos] for pos in g.stock]
    if g.turned >= 0:
        cards.append(g.turned)
    return cards


def _check_determinization(real: Game, view: View, d: Game) -> None:
    seat = view.seat
    pack = list(range(real.rules.lowest_rank * 4, 52))
    assert not any(d.hidden) and not d.hidden_owner
    assert d.hands[seat] == view.hand_mask == real.hands[seat]
    for other in range(d.n):
        known = view.known_mask[other]
        assert d.hands[other] & known == known
        assert d.hand_size(other) == view.hand_sizes[other] == real.hand_size(other)
    # Each card in one place only, and the whole pack there (conservation).
    assert sorted(_places(d)) == pack
    assert sorted(d.face) == pack
    assert all(d.pos_of[d.face[pos]] == pos for pos in range(len(d.face)))
    for place, card in view.stock_known:
        assert d.face[d.stock[place]] == card
    assert d.discard == real.discard and d.tab_a == real.tab_a and d.tab_k == real.tab_k
    assert d.state_hash() == real.state_hash()
    if real.to_act_seat == seat:
        assert set(d.legal_moves()) == set(real.legal_moves())


def _play_out(g: Game, rng: random.Random) -> None:
    for _ in range(5000):
        if g.is_over:
            return
        g.play(rng.choice(g.legal_moves()))
    raise AssertionError("a determinized game did not end")


@settings(max_examples=60)
@given(
    case=st.sampled_from(CASES),
    seed=st.integers(min_value=0, max_value=10**6),
    count=st.integers(min_value=0, max_value=150),
    sample=st.integers(min_value=0, max_value=2**32),
    players=st.integers(min_value=2, max_value=6),
)
def test_determinize_never_gives_a_seat_a_card_it_cannot_hold(
    case: tuple[str, dict[str, Any]], seed: int, count: int, sample: int, players: int
) -> None:
    preset, opts = case
    if preset == "durak-teams":
        players = 4 if players < 6 else 6
    real = new_game(preset, players, seed=seed, **opts)
    rng = random.Random(seed)
    _random_moves(real, count, rng)
    for seat in range(players):
        view = real.view(seat)
        srng = random.Random(sample + seat)
        for _ in range(3):
            d = view.determinize(srng)
            _check_determinization(real, view, d)
        _play_out(d, srng)
        assert real.determinize(seat, srng).state_hash() == real.state_hash()


def test_determinizations_vary_and_a_seed_repeats_one() -> None:
    real = new_game("moska", 4, seed=8)
    view = real.view(1)
    hands = {tuple(view.determinize(random.Random(i)).hands) for i in range(20)}
    assert len(hands) > 10
    a, b = view.determinize(random.Random(7)), view.determinize(random.Random(7))
    assert a.hands == b.hands and a.face == b.face


def test_an_old_view_determinizes_the_state_it_was_taken_in() -> None:
    real = new_game("kaavi", 4, seed=2)
    rng = random.Random(2)
    _random_moves(real, 6, rng)
    then = real.state_hash()
    view = real.view(real.to_act_seat)
    _random_moves(real, 25, rng)
    d = view.determinize(rng)
    assert d.state_hash() == then
    assert d.hands[view.seat] == view.hand_mask


def _in_step(preset: str, players: int, seed: int):  # type: ignore[no-untyped-def]
    """Yield (full game, seat engines) at every decision of a random game, the engines
    built as network peers hold them (see test_hidden_information)."""
    full = new_game(preset, players=players, seed=seed)
    engines = [new_hidden_game(preset, players, dealer=full.dealer) for _ in range(players)]
    _deliver(full, engines)
    rng = random.Random(seed)
    while not full.is_over:
        yield full, engines
        actor = full.to_act_seat
        move = rng.choice(full.legal_moves())
        shown = [c for c in _cards_from_hand(full, move) if full.turned != c]
        for engine in engines:
            for card in shown:
                engine.reveal(full.pos_of[card], card)
            engine.play(move, seat=actor)
        full.play(move)
        _deliver(full, engines)
    yield full, engines


@pytest.mark.parametrize(
    "preset", ["moska", "taraki-mm", "kaavi", "durak", "perevodnoy", "mustamaija"]
)
def test_a_peers_engine_gives_the_same_view_and_determinizes(preset: str) -> None:
    """A view of a peer's partial engine is the view of the full game, byte for byte, and
    determinizes the same way; its masked game is in step with both."""
    steps = 0
    for full, engines in _in_step(preset, 4, seed=13):
        seat = steps % 4
        mine = engines[seat].view(seat)
        assert pickle.dumps(mine) == pickle.dumps(full.view(seat))
        masked = mine.masked_game()
        assert masked.state_hash() == full.state_hash()
        assert masked.hands[seat] == full.hands[seat]
        if full.to_act_seat == seat:
            assert set(masked.legal_moves()) == set(full.legal_moves())
        d = mine.determinize(random.Random(steps))
        _check_determinization(full, mine, d)
        full_d = full.view(seat).determinize(random.Random(steps))
        assert full_d.hands == d.hands and full_d.face == d.face
        steps += 1
    assert steps > 20


def test_a_view_of_a_hand_the_engine_cannot_see_is_not_determinized() -> None:
    for full, engines in _in_step("moska", 3, seed=4):
        view = engines[0].view(1)  # seat 0's engine does not know seat 1's hand
        assert view.hidden_in_hand == full.hand_size(1)
        assert view.masked_game().state_hash() == full.state_hash()
        with pytest.raises(DeterminizeError, match="has not seen"):
            view.determinize(random.Random(0))
        with pytest.raises(ValueError):  # DeterminizeError is a ValueError (and HiddenCardError)
            engines[0].determinize(2, random.Random(0))
        break


def test_a_view_of_a_waiting_game_is_not_determinized() -> None:
    """Before the indicator's face is revealed (M3) no seat can act, so there is nothing
    to search: determinize says so, while the masked game is still the game as known."""
    engine = new_hidden_game("moska", 4, dealer=0)
    for pos, owner in engine.take_reveal_requests():
        if owner == 1:
            engine.reveal(pos, pos)  # seat 1 learns its own cards; the indicator stays hidden
    view = engine.view(1)
    assert view.to_act is None and view.hidden_in_hand == 0
    assert view.masked_game().state_hash() == engine.state_hash()
    with pytest.raises(DeterminizeError, match="waits for a card"):
        view.determinize(random.Random(0))


def test_the_masked_game_gives_the_engines_reasons() -> None:
    """``ui.shorthand`` asks the view's game why a move is illegal: the masked game, which
    knows this seat's hand, answers as the full game does."""
    real = new_game("moska", 4, seed=1)
    view = real.view(real.to_act_seat)
    for text in ("pass", "take", "attack AS AH"):
        with pytest.raises(IllegalMove) as want:
            real.copy().play(text)
        with pytest.raises(IllegalMove) as got:
            view.masked_game().play(text, seat=view.seat)
        assert str(got.value) == str(want.value)
    assert view.masked_game().state_hash() == real.state_hash()


def test_a_view_pickles_and_copies_as_a_plain_view() -> None:
    """A subclass standing for a view (the arena's lazy view) pickles to the view's bytes
    and unpickles as a plain View; copies drop the cache and keep the data."""

    class Standing(View):
        __slots__ = ("extra",)

    g = new_game("mustamaija", 3, seed=4)
    view = g.view(1)
    standing = Standing(g, 1)
    standing.extra = g  # what a subclass adds is not pickled
    assert pickle.dumps(standing) == pickle.dumps(view)
    assert type(pickle.loads(pickle.dumps(standing))) is View
    view.determinize(random.Random(1))
    for clone in (copy.copy(view), copy.deepcopy(view)):
        assert pickle.dumps(clone) == pickle.dumps(g.view(1))
        assert clone.determinize(random.Random(2)).hands == view.determinize(random.Random(2)).hands

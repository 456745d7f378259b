"""docs/BOTS.md says what a bot author needs and says it right: every move kind by its
``kind_name``, which card of a kill is the killer, and the view's fields the README's own
bot uses (``trump_suit``, not only ``trump``)."""

from __future__ import annotations

import re
from pathlib import Path

from moska_p2p.cards import CARD_TEXT
from moska_p2p.engine import new_game
from moska_p2p.engine.moves import KIND_NAMES

ROOT = Path(__file__).resolve().parents[2]
BOTS = (ROOT / "docs" / "BOTS.md").read_text()
README = (ROOT / "README.md").read_text()


def test_every_move_kind_is_listed_by_its_kind_name() -> None:
    listed = re.findall(r"^\| `([a-z -]+)` \| ", BOTS, flags=re.M)
    assert [k for k in listed if k in KIND_NAMES] == list(KIND_NAMES), listed


def test_the_view_fields_the_readmes_bot_uses_are_named() -> None:
    bot = README[README.index("class LowestCardBot") :]
    bot = bot[: bot.index("```")]
    used = set(re.findall(r"\bview\.([a-z_]+)", bot)) | set(re.findall(r"\bmove\.([a-z_]+)", bot))
    assert {"trump_suit", "decision", "kind_name", "cards"} <= used, used
    for name in used:
        assert f"`{name}`" in BOTS, name


def test_the_trump_fields_are_what_the_doc_says() -> None:
    game = new_game("durak", players=2, seed=1)
    view = game.view(0)
    assert view.trump in ("C", "D", "H", "S")
    assert view.trump_suit == "CDHS".index(view.trump)
    assert view.trump_card is not None and view.trump_card.endswith(view.trump)
    assert "`trump_suit`" in BOTS and '`"C"`, `"D"`, `"H"` or `"S"`' in BOTS


def test_a_kills_first_card_is_the_one_killed_and_the_second_the_killer() -> None:
    assert "the first card is the one killed (on the\ntable) and the second the killer" in BOTS
    game = new_game("durak", players=2, seed=1)
    for _ in range(200):
        kills = [m for m in game.legal_moves() if m.kind_name == "kill"]
        if kills:
            break
        game.play(str(game.legal_moves()[0]))
    kill = kills[0]
    attacked, killer = (CARD_TEXT[c] for c in kill.cards)
    seat = game.to_act_seat
    assert seat is not None
    assert (attacked, None) in game.view(seat).table and killer in game.view(seat).hand
    assert str(kill) == f"kill {attacked} {killer}"

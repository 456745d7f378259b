"""The rules the messages cite ship with the project.

Every rule id the package's code and messages use is defined in ``docs/RULES.md``; the
documents the code cites are in the repository; ``moska rules`` names the document, takes a
preset in any case, fits 80 columns and lists only the moves the preset has (checked against
the engine's own legal moves in random games).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.cli import app
from moska_p2p.engine import PRESETS, make_rules, new_game
from moska_p2p.rules_text import MOVE_EXAMPLES, RULES_DOCUMENT, move_kinds, rules_text

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "RULES.md"
# A rule id: a section letter (C common, M Moska, K Kaavi, D Durak, MM Mustamaija) and a
# number, standing alone ("2C" is a card, "M6-M13" two ids).
RULE_ID = re.compile(r"(?<![\w-])(MM|C|M|K|D)(\d{1,2})(?![\w])")

runner = CliRunner()


def _defined() -> set[str]:
    """The ids RULES.md defines: each rule is a bullet that opens with its id."""
    return {a + b for a, b in re.findall(r"^- (MM|C|M|K|D)(\d+) ", RULES.read_text(), re.M)}


def _used(text: str) -> set[str]:
    return {a + b for a, b in RULE_ID.findall(text)}


def test_every_rule_id_the_code_and_messages_cite_is_defined() -> None:
    defined = _defined()
    assert {"C1", "C7", "M24", "K5", "D12", "MM7"} <= defined
    missing: dict[str, set[str]] = {}
    sources = sorted((ROOT / "moska_p2p").rglob("*.py"))
    guides = ["PLAYING.md", "NETWORK.md", "BOTS.md", "ARENA.md", "LEARNING.md"]
    documents = [ROOT / "README.md"]
    documents += [ROOT / "docs" / name for name in ["DESIGN.md", "RECORD.md", *guides]]
    for path in sources + [d for d in documents if d.exists()]:
        unknown = _used(path.read_text()) - defined
        if unknown:
            missing[str(path.relative_to(ROOT))] = unknown
    assert not missing, f"rule ids cited but not defined in docs/RULES.md: {missing}"
    used = set().union(*(_used(p.read_text()) for p in sources))
    assert {"M7", "D4", "MM4", "C3"} <= used  # the collector finds what the issue quotes


def test_the_collector_would_catch_an_undefined_id() -> None:
    assert _used('raise IllegalMove("no such rule (M99)")  # see D42, not 2C or 10D') == {
        "M99",
        "D42",
    }


def test_the_documents_the_code_cites_are_in_the_repository() -> None:
    cited: set[str] = set()
    for path in (ROOT / "moska_p2p").rglob("*.py"):
        cited |= set(re.findall(r"\b([A-Z]+\.md)\b", path.read_text()))
    assert {"RULES.md", "DESIGN.md"} <= cited
    shipped = {p.name for p in ROOT.glob("*.md")} | {p.name for p in ROOT.glob("*/*.md")}
    assert cited <= shipped, cited - shipped
    assert RULES_DOCUMENT == "docs/RULES.md" and (ROOT / RULES_DOCUMENT).is_file()
    readme = (ROOT / "README.md").read_text()
    assert "docs/RULES.md" in readme and "docs/DESIGN.md" in readme
    assert "docs/RECORD.md" in readme and (ROOT / "docs" / "RECORD.md").is_file()


@pytest.mark.parametrize("typed", ["Durak", "DURAK", " durak "])
def test_moska_rules_takes_a_preset_in_any_case(typed: str) -> None:
    run = runner.invoke(app, ["rules", typed])
    assert run.exit_code == 0, run.output
    assert run.stdout == runner.invoke(app, ["rules", "durak"]).stdout


def test_moska_rules_names_the_document_and_cites_only_its_ids() -> None:
    defined = _defined()
    for preset in PRESETS:
        text = runner.invoke(app, ["rules", preset]).stdout
        assert "docs/RULES.md" in text
        cited = _used(text)
        assert cited and cited <= defined, (preset, cited - defined)
        assert max(len(line) for line in text.splitlines()) <= 78, preset
    unknown = runner.invoke(app, ["rules", "nosuch"])
    assert unknown.exit_code == 2 and unknown.stderr.startswith("error: unknown preset")


def _kinds_played(preset: str, options: dict[str, str], games: int) -> set[str]:
    kinds: set[str] = set()
    for number in range(games):
        players = 4 if preset == "durak-teams" else 2 + number % 3
        game = new_game(preset, players=players, seed=number, **options)
        rng = random.Random(number)
        for _ in range(2000):
            if game.is_over:
                break
            legal = game.legal_moves()
            kinds.update(m.kind_name for m in legal)
            game.play(rng.choice(legal))
    return kinds


EXTRA_OPTIONS = {
    "moska": {"self_execution": "on", "deck_kill": "on"},
    "perevodnoy": {"transfer_show_trump": "on"},
}


@pytest.mark.parametrize("preset", PRESETS)
def test_the_moves_listed_are_exactly_those_the_engine_has(preset: str) -> None:
    options = EXTRA_OPTIONS.get(preset, {})
    rules = make_rules(preset, **options)
    assert _kinds_played(preset, options, 25) == set(move_kinds(rules))
    shown = rules_text(preset) if not options else ""
    for kind in move_kinds(make_rules(preset)):
        assert not shown or MOVE_EXAMPLES[kind] in shown


def test_mustamaija_lists_only_its_own_moves() -> None:
    text = rules_text("mustamaija")
    moves = next(line for line in text.splitlines() if line.startswith("Moves:"))
    assert moves == "Moves: attack 3H 3S | kill 3H 7H | take   (C6)"
    for absent in ("pass", "exchange", "attack deck", "deck-kill", "self", "beg", "transfer"):
        assert absent not in moves

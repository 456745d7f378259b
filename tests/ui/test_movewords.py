"""A Finnish table writes its log and its legal moves in Finnish (``tapa 4H 2C``, not
``kill 4H 2C``), and what it shows can be typed back: every legal move of every kind, in
the table's words, reads as the very move."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from moska_p2p import i18n
from moska_p2p.engine import new_game
from moska_p2p.engine.moves import KIND_NAMES
from moska_p2p.ui.movewords import WORDS, from_words, in_words
from moska_p2p.ui.render import Style, log_lines, move_text
from moska_p2p.ui.shorthand import read_move

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_has_its_finnish_words() -> None:
    assert set(WORDS["fi"]) == set(KIND_NAMES)
    assert in_words("kill 4H 2C", "fi") == "tapa 4H 2C"
    assert in_words("attack deck", "fi") == "hyökkää pakasta"
    assert in_words("attack 3H 3S", "fi") == "hyökkää 3H 3S"
    assert in_words("transfer show 7D", "fi") == "siirrä näyttäen 7D"
    assert in_words("kill 4H 2C", "en") == "kill 4H 2C"
    assert from_words("Hyökkää pakasta") == "attack deck" and from_words("take") == "take"


@pytest.mark.parametrize("preset", ["moska", "perevodnoy", "kaavi", "mustamaija", "durak"])
def test_every_legal_move_in_finnish_reads_back_as_itself(finnish: None, preset: str) -> None:
    rng = random.Random(3)
    kinds: set[str] = set()
    for seed in range(3):
        game = new_game(preset, players=3 if preset != "durak" else 2, seed=seed)
        for _ in range(400):
            if game.is_over:
                break
            seat = game.to_act_seat
            assert seat is not None
            view, legal = game.view(seat), game.legal_moves()
            for move in legal:
                shown = in_words(str(move))
                assert shown.split()[0] not in ("attack", "kill", "take", "pass", "exchange")
                assert read_move(shown, view, legal) == move, shown
                kinds.add(move.kind_name)
            game.play(game.random_move(rng))
    assert {"attack", "kill", "take"} <= kinds


def test_the_log_and_a_move_read_in_finnish(finnish: None) -> None:
    style = Style(color=False, symbols=False)
    assert move_text("kill 4H 2C", style) == "tapa 4H 2C"
    lines = log_lines([(0, "attack 4H"), (1, "take")], ["ann", "bo"], color=False,
                      symbols=False, trump="S", width=80)  # fmt: skip
    assert lines == ["ann: hyökkää 4H", "bo: nosta"]


def test_the_finnish_plain_table_lists_its_moves_in_finnish() -> None:
    env = {k: v for k, v in os.environ.items() if k not in i18n.LOCALE_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "--lang", "fi", "play", "--plain", "--bots",
         "greedy", "--players", "2", "--seed", "1"],
        input="siirrot\nlopeta\nk\n", capture_output=True, text=True, timeout=60, cwd=ROOT,
        env=env, check=False,
    )  # fmt: skip
    legal = [line for line in done.stdout.splitlines() if line.startswith("sallitut")]
    assert legal, done.stdout
    for line in legal:
        moves = line.split(":", 1)[1].split("|")
        assert all(m.split()[0] not in KIND_NAMES for m in moves if m.strip()), line
    log = [line for line in done.stdout.splitlines() if line.startswith("greedy 1: ")]
    assert log and all(line.split(": ", 1)[1].split()[0] not in KIND_NAMES for line in log)

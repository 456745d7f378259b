"""The README's examples, and those of the guides in docs/ it links to, run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.engine import new_game
from moska_p2p.table.local import play_game

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
GUIDES = [
    "PLAYING.md", "NETWORK.md", "BOTS.md", "ARENA.md", "LEARNING.md", "LEVELS.md", "TOURNAMENT.md",
]
TEXTS = [README, *((ROOT / "docs" / name).read_text() for name in GUIDES)]


def _python_blocks() -> list[str]:
    """Every Python example, of the README and of the guides (they moved there)."""
    return [b for text in TEXTS for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]


def test_the_readme_is_a_front_page_and_links_every_guide() -> None:
    assert len(README.splitlines()) <= 250
    assert all(f"(docs/{name})" in README for name in GUIDES)


def test_quick_start_commands_are_the_two_a_newcomer_types() -> None:
    shell = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    assert "pip install . && moska play" in shell[0]
    assert "pip install -e '.[dev]' && pytest" in shell[1]


def test_the_complete_game_example_runs() -> None:
    block = next(b for b in _python_blocks() if 'print("loser:"' in b)
    out = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.startswith("loser: ")


def test_the_example_bot_in_the_readme_is_the_one_in_bots_and_it_plays() -> None:
    block = next(b for b in _python_blocks() if "class LowestCardBot" in b)
    source = (ROOT / "bots" / "example_bot.py").read_text()
    assert block.strip() in source
    namespace: dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    bot_class = namespace["LowestCardBot"]
    losses = 0
    for seed in range(40):
        game = new_game("moska", players=4, seed=seed)
        bots = [bot_class(), RandomBot(seed), RandomBot(seed + 1), RandomBot(seed + 2)]  # type: ignore[operator]
        record = play_game(game, bots, seed=seed)
        assert record.forfeit is None, record.reason
        losses += 0 in record.losers
    assert losses < 10  # well under the 25% of chance


def test_the_numeric_encoding_example_runs() -> None:
    block = next(b for b in _python_blocks() if "encode_view" in b)
    exec(compile(block, "README.md", "exec"), {})

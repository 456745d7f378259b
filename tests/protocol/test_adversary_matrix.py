"""The adversary matrix, asserted: a cheater at any stage, with any fault, is the
only one named; every honest transcript verifies with the verdict its owner reached.

CI runs every cell at 3 seats and a sample at 4 and 6 (a 6-seat deal with proofs takes a
second or two); ``MOSKA_FULL_MATRIX=1`` runs them all, and ``python
scripts/adversary_matrix.py`` prints the whole table.
"""

from __future__ import annotations

import os

import pytest
from adversary_matrix import FAULTS, CellResult, run_cell, stages, table_text

FULL = os.environ.get("MOSKA_FULL_MATRIX") == "1"

SAMPLE = {
    4: {
        **{stage: ("equivocate",) for stage in stages(4)},
        "shuffle1@3": FAULTS,
        "shuffle2@3": FAULTS,
        "claim": FAULTS,
        "move": FAULTS,
    },
    6: {
        "hello": ("equivocate", "withhold"),
        "seat": ("equivocate",),
        "shuffle1@5": ("equivocate", "false"),
        "shuffle2@0": ("equivocate",),
        "shuffle2@5": ("equivocate", "withhold"),
        "move": ("equivocate", "leave"),
        "reveal": ("equivocate",),
    },
}


def _cells() -> list[tuple[int, str, str]]:
    out = [(3, stage, fault) for stage in stages(3) for fault in FAULTS]
    for players in (4, 6):
        for stage in stages(players):
            for fault in FAULTS:
                if FULL or fault in SAMPLE[players].get(stage, ()):
                    out.append((players, stage, fault))
    return out


RESULTS: list[CellResult] = []


@pytest.mark.parametrize(("players", "stage", "fault"), _cells())
def test_only_the_cheater_is_named(players: int, stage: str, fault: str) -> None:
    result = run_cell(players, stage, fault)
    RESULTS.append(result)
    assert result.applicable, "the game never reached the cheater's message"
    details = [
        (o.index, o.ended, o.kind, o.culprits, o.verify_fault or "verifies")
        for o in result.outcomes
    ]
    assert result.error is None, result.error
    assert result.honest_named == 0, details
    assert result.rejected == 0, details
    assert result.hung == 0 and result.unnamed == 0, details
    assert result.ok, details
    if fault != "equivocate":
        assert result.convicted == len(result.outcomes), details


def test_the_matrix_table() -> None:
    """The table of every cell run above (``pytest -s`` shows it)."""
    if not RESULTS:
        pytest.skip("no cell ran in this process")
    text = table_text(RESULTS)
    print("\n" + text)
    assert "0 honest seats named, 0 honest transcripts rejected, 0 failing" in text

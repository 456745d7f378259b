"""Fixtures of the network tests: tables of real processes, killed at teardown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from net_harness import Table


@pytest.fixture
def make_table(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    made: list[Table] = []

    def make(preset: str, players: int, **settings: Any) -> Table:
        table = Table(tmp_path, preset, players, **settings)
        made.append(table)
        table.start()
        return table

    try:
        yield make
    finally:
        for table in made:
            table.kill_all()

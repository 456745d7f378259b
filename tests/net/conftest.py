"""Fixtures of the network tests: tables of real processes, killed at teardown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from net_harness import LOOPBACK, Table, loopback_lan

from moska_p2p.net.discovery import ENV_GROUP, ENV_INTERFACE, Settings


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


@pytest.fixture
def lan(monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A multicast group and port of this test's own, on loopback only; set in the environment
    too, for the commands and processes the test starts. Skips when loopback multicast fails."""
    settings = loopback_lan()
    monkeypatch.setenv(ENV_GROUP, f"{settings.group}:{settings.port}")
    monkeypatch.setenv(ENV_INTERFACE, LOOPBACK)
    return settings

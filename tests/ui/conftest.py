"""Fixtures of the screen's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from moska_p2p import i18n


@pytest.fixture
def finnish() -> Iterator[None]:
    """The Finnish texts for one test, English again after it."""
    i18n.use_language("fi")
    try:
        yield
    finally:
        i18n.use_language("en")

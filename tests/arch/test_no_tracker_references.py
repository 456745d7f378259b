"""The repository explains itself: no docstring, comment or document points to an issue of a
tracker that is not in it ("issue 24 item 5" says nothing to a newcomer reading the code;
what the code does, and the PROTOCOL.md or RULES.md section it follows, does)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = re.compile(r"\b[Ii]ssues? #?\d+|\(#\d+\)")
PLACES = ["moska_p2p", "tests", "scripts", "docs", "protocol", "bots"]
TOP = ["README.md", "ARCHITECTURE.md"]


def _texts() -> list[Path]:
    files = [ROOT / name for name in TOP]
    for place in PLACES:
        files += [p for p in (ROOT / place).rglob("*") if p.suffix in (".py", ".md")]
    return files


def test_no_file_points_to_an_issue_tracker() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if REFERENCE.search(line) and path.name != Path(__file__).name
    ]
    assert not found, "\n".join(found)


def test_the_pattern_sees_the_forms_that_were_used() -> None:
    for text in ("(issue 24 item 5)", "Issue 11's acceptance", "issues 22 and 24", "(#31)"):
        assert REFERENCE.search(text), text
    assert not REFERENCE.search("an issue with the relay")

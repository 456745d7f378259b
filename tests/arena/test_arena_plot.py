"""``moska arena --plot FILE``: one interval per bot where the loss rates put them, the par
line, ratings over the games, the same bytes for the same result, a PNG of the promised
size, and the refusals (unknown extension, no matplotlib) made before any game is played.

The drawing tests need the optional extra (``pip install 'moska-p2p[plot]'``) and are
skipped without it; the refusals run everywhere."""

from __future__ import annotations

import json
import re
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.arena.arena import ArenaResult, run_arena
from moska_p2p.arena.plot import interval_id
from moska_p2p.cli import app

runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"
BOTS = "greedy,shedder,random,random"
NEEDS_MATPLOTLIB = "matplotlib (the optional extra: pip install 'moska-p2p[plot]') is missing"


def _matplotlib() -> None:
    pytest.importorskip("matplotlib", reason=NEEDS_MATPLOTLIB)


def _arena(tmp_path: Path, *extra: str, bots: str = BOTS, games: int = 24) -> tuple[int, str]:
    args = ["arena", "--bots", bots, "--games", str(games), "--seed", "3", "--quiet"]
    json_file = tmp_path / "result.json"
    result = runner.invoke(app, [*args, "--json", str(json_file), *extra])
    return result.exit_code, result.output


def _groups(svg: Path) -> dict[str, ET.Element]:
    return {g.attrib["id"]: g for g in ET.parse(svg).iter(f"{SVG}g") if "id" in g.attrib}


def _x_extent(group: ET.Element) -> tuple[float, float]:
    """The leftmost and rightmost x of the paths in ``group`` (SVG pixels)."""
    xs = [
        float(x)
        for path in group.iter(f"{SVG}path")
        for x in re.findall(r"[ML] (-?[\d.]+) -?[\d.]+", path.attrib["d"])
    ]
    return min(xs), max(xs)


def test_the_svg_holds_one_interval_per_bot_where_its_loss_rate_is(tmp_path: Path) -> None:
    _matplotlib()
    svg = tmp_path / "arena.svg"
    code, output = _arena(tmp_path, "--plot", str(svg))
    assert code == 0, output
    groups = _groups(svg)
    intervals = sorted(i for i in groups if i.startswith("interval-"))
    names = ["greedy", "shedder", "random"]  # random has two seats: one bot, one interval
    assert intervals == sorted(interval_id(i, n) for i, n in enumerate(names))
    assert sorted(i for i in groups if i.startswith("rating-")) == [f"rating-{i}" for i in range(3)]
    assert "par" in groups
    # The intervals lie where the statistics put them: their x order (the loss-rate axis)
    # is that of the Wilson bounds, and par (1/4) lies between greedy's and random's.
    bots = json.loads((tmp_path / "result.json").read_text())["bots"]
    extents = [_x_extent(groups[interval_id(i, n)]) for i, n in enumerate(names)]
    lows = [b["ci95"][0] for b in bots]
    assert sorted(range(3), key=lambda k: extents[k][0]) == sorted(range(3), key=lows.__getitem__)
    par_x = _x_extent(groups["par"])[0]
    assert extents[0][1] < par_x < extents[2][0]  # greedy better than chance, random worse
    texts = "".join(t.text or "" for t in ET.parse(svg).iter(f"{SVG}text"))
    assert all(n in texts for n in names) and "24 games" in texts


def test_names_that_are_not_id_characters_get_distinct_ids() -> None:
    assert interval_id(0, "bots/my bot.py:Bot") == "interval-0-bots-my-bot.py-Bot"
    assert interval_id(1, "ismcts:time=0.02") != interval_id(2, "ismcts:time=0.02")


def _result(games: int = 12) -> ArenaResult:
    return run_arena("durak", ["greedy", "random", "shedder"], games, seed=2)


def test_the_same_result_draws_the_same_bytes(tmp_path: Path) -> None:
    _matplotlib()
    from moska_p2p.arena.plot import draw

    result = _result()
    for suffix in ("svg", "png"):
        one, two = tmp_path / f"one.{suffix}", tmp_path / f"two.{suffix}"
        draw(result, one)
        draw(result, two)
        assert one.read_bytes() == two.read_bytes()
    assert b"<dc:date>" not in (tmp_path / "one.svg").read_bytes()  # no date in it


def test_a_png_is_a_png_of_the_promised_size(tmp_path: Path) -> None:
    _matplotlib()
    from moska_p2p.arena.plot import DPI, SIZE

    png = tmp_path / "arena.PNG"  # the extension in any case
    code, output = _arena(tmp_path, "--plot", str(png), bots="greedy,random", games=6)
    assert code == 0, output
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (round(SIZE[0] * DPI), round(SIZE[1] * DPI))


def test_a_long_run_draws_thinned_rating_lines(tmp_path: Path) -> None:
    _matplotlib()
    from moska_p2p.arena.plot import MAX_POINTS, _thin

    assert _thin(5) == [0, 1, 2, 3, 4]
    kept = _thin(10_001)
    assert len(kept) == MAX_POINTS and kept[0] == 0 and kept[-1] == 10_000


def _refused(tmp_path: Path, plot: str) -> str:
    saved = tmp_path / "games"
    code, output = _arena(tmp_path, "--plot", str(tmp_path / plot), "--save", str(saved))
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    # Refused before the arena ran: no game saved, no results written, no plot.
    assert not saved.exists() and not (tmp_path / "result.json").exists()
    assert not (tmp_path / plot).exists()
    return lines[0]


@pytest.mark.parametrize("name", ["arena.pdf", "arena", "arena.svg.txt"])
def test_an_unknown_extension_is_refused_before_the_run(tmp_path: Path, name: str) -> None:
    assert ".svg or .png" in _refused(tmp_path, name)


def test_a_missing_extra_is_refused_before_the_run_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    line = _refused(tmp_path, "arena.svg")
    assert "matplotlib" in line and "pip install 'moska-p2p[plot]'" in line

"""``moska watch``'s screen: the table a spectator sees has every hand face
down (sizes and the cards the game showed) and no hand of its own; in lines a move is a line;
and on a real terminal the full-screen table runs live against a real table of bots, q stops
it (exit 130)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

from screen_harness import ROOT, moska

from moska_p2p.engine import Game, make_rules
from moska_p2p.ui.render import render_table
from moska_p2p.ui.spectate import SpectatorScreen


def _game() -> Game:
    game = Game(make_rules("moska"), 3, list(range(52)), dealer=0)
    for _ in range(4):
        game.play(game.legal_moves()[0])
    return game


def test_a_spectators_table_shows_every_hand_face_down_and_no_hand_of_its_own() -> None:
    game = _game()
    text = render_table(game.view(0), ["ann", "bob", "cy"], color=False, you=-1, spectating=True)
    assert "hands face down: you are watching" in text
    assert not re.search(r"^hand ", text, re.M)  # no numbered hand: the spectator holds none
    assert "(you)" not in text
    for name in ("ann", "bob", "cy"):
        assert re.search(rf"^  {name} +\d+ cards", text, re.M) or re.search(
            rf"^. {name} +\d+ cards", text, re.M
        ), text
    player = render_table(game.view(0), ["ann", "bob", "cy"], color=False)
    assert re.search(r"^hand ", player, re.M)  # a player's own table is unchanged


def test_in_lines_each_move_is_a_line() -> None:
    out = io.StringIO()
    screen = SpectatorScreen(interactive=False, out=out, color=False, symbols=False)
    screen.moved(None, ["ann", "bob"], 1, "attack 7H")  # type: ignore[arg-type]
    screen.close()
    assert out.getvalue() == "seat 1 (bob): attack 7H\n"


def test_the_full_screen_table_is_live_against_real_bots_and_q_stops(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1", XDG_CONFIG_HOME=str(tmp_path / "config"))
    common = ["--bind", "127.0.0.1", "-q", "--pace", "0.3", "--wait", "60"]
    host = subprocess.Popen(
        [sys.executable, "-m", "moska_p2p", "host", "--players", "2", "--bot", "greedy",
         "--port", "0", "--no-announce", "--transcript", str(tmp_path / "h.moska"), *common],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
    )  # fmt: skip
    joiner = None
    term = None
    try:
        assert host.stdout is not None
        port = ""
        for line in host.stdout:
            found = re.search(r"join with: moska join 127\.0\.0\.1:(\d+)", line)
            if found:
                port = found.group(1)
                break
        assert port, "the host printed no address"
        joiner = subprocess.Popen(
            [sys.executable, "-m", "moska_p2p", "join", f"127.0.0.1:{port}", "--bot", "random",
             "--transcript", str(tmp_path / "j.moska"), *common],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        term = moska("watch", f"127.0.0.1:{port}", "--transcript", str(tmp_path / "w.moska"))
        term.wait(r"^moska \(watching\) · ", row=0)
        term.wait(r"hands face down: you are watching")
        first = term.move_number()
        term.wait_for(
            lambda: term.header() if term.move_number() > first + 2 else None, 60, "moves"
        )
        term.check("(you)" not in term.text(), "a spectator is nobody at the table")
        term.send("q")
        assert term.exit_code() == 130
    finally:
        if term is not None:
            term.close()
        for process in (joiner, host):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(5)
        if host.stdout is not None:
            host.stdout.close()

"""Finnish: ``--lang fi``, the config's ``lang`` and the locale give the
table, the help, the rules and a person's messages in Finnish; English stays the default.

The catalogue is checked as shipped (every marked text translated, no fuzzy entry, the
``.mo`` the compiled ``.po``); the engine's reasons are checked against the engine's own
source (every text it can raise has a Finnish pattern); the real program is run for ``rules``
(by option, by locale, by config file) and on a pseudo-terminal for the table.
"""

from __future__ import annotations

import ast
import gettext
import importlib.util
import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from screen_harness import ROOT, Term, term_env

from moska_p2p import i18n
from moska_p2p.engine import Game, new_game
from moska_p2p.rules_text import rules_text
from moska_p2p.ui import reasons
from moska_p2p.ui.render import render_table
from moska_p2p.ui.shorthand import read_move
from moska_p2p.ui.terminal import TerminalPlayer

NAMES = ["alice", "greedy 1", "greedy 2"]


def _tool() -> ModuleType:
    """scripts/i18n.py, the catalogue tool (a script, not a module of the package)."""
    if "i18n_tool" in sys.modules:
        return sys.modules["i18n_tool"]
    spec = importlib.util.spec_from_file_location("i18n_tool", ROOT / "scripts" / "i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["i18n_tool"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _game() -> Game:
    """A fixed Moska game, 7 moves in: an attack card on the table, seat 2 to defend."""
    game = new_game("moska", players=3, seed=5)
    rng = random.Random(5)
    for _ in range(7):
        game.play(game.random_move(rng))
    return game


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in i18n.LOCALE_VARIABLES}
    env.pop("MOSKA_CONFIG", None)
    env.update(PYTHONIOENCODING="utf-8", NO_COLOR="1", **extra)
    return env


def _moska(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_env(**env),
        cwd=str(ROOT),
        timeout=60,
    )


# ---------------------------------------------------------------------- the catalogue


def test_the_shipped_catalogue_translates_every_marked_text_and_its_mo_is_compiled() -> None:
    tool = _tool()
    assert tool.problems("fi") == []
    header, entries = tool.read_po(tool.po_path("fi"))
    assert "Plural-Forms: nplurals=2; plural=(n != 1);" in header
    assert len(entries) > 150
    with tool.mo_path("fi").open("rb") as file:
        shipped = gettext.GNUTranslations(file)
    for msgid, entry in entries.items():
        assert not entry.fuzzy and all(entry.msgstr), msgid
        if entry.plural is None:
            assert shipped.gettext(msgid) == entry.msgstr[0]
        else:
            assert shipped.ngettext(msgid, entry.plural, 1) == entry.msgstr[0]
            assert shipped.ngettext(msgid, entry.plural, 5) == entry.msgstr[1]


def test_the_checker_finds_an_untranslated_a_fuzzy_and_a_stale_catalogue(
    tmp_path: Path,
) -> None:
    tool = _tool()
    header, entries = tool.read_po(tool.po_path("fi"))
    first, second = list(entries)[:2]
    entries[first].msgstr = [""] * len(entries[first].msgstr)
    entries[second].fuzzy = True
    po = tmp_path / "moska.po"
    tool.write_po(po, header, entries)
    again_header, again = tool.read_po(po)
    assert again_header == header and not again[first].translated and again[second].fuzzy
    mo = tool.compile_mo(again_header, again)
    assert mo != tool.mo_path("fi").read_bytes()  # the shipped .mo would be stale
    translation = gettext.GNUTranslations(io.BytesIO(mo))
    assert translation.gettext(first) == first  # neither the empty nor the fuzzy one is used
    assert translation.gettext(second) == second


def test_every_placeholder_of_a_translation_is_one_its_english_can_fill() -> None:
    """A Finnish text naming a field the code does not give would raise at the table; the
    seat's forms (``{seat}``, ``{seats}``, ``{others}``) are the ones reasons.py gives."""
    tool = _tool()
    _, entries = tool.read_po(tool.po_path("fi"))
    field = re.compile(r"\{(\w*)[^{}]*\}")
    seat_forms = {"seat", "seats", "other", "others"}
    for msgid, entry in entries.items():
        given = set(field.findall(msgid + (entry.plural or "")))
        if given & seat_forms:
            given |= seat_forms
        for text in entry.msgstr:
            assert set(field.findall(text)) <= given, (msgid, text)


# ---------------------------------------------------------------------- the table


ENGLISH_LABELS = re.compile(
    r"\b(trump|stock|out of play|move \d|cards?|holds|table|hand|attacker|defender|you"
    r"|to defend|no trump yet)\b"
)


def test_the_finnish_table_has_the_games_words_and_no_english_label(finnish: None) -> None:
    game = _game()
    view = game.view(2)
    text = render_table(view, NAMES, color=False)
    for word in ("valtti", "pakka", "pois pelistä", "siirto 7", "korttia", "hyökkääjä",
                 "puolustaja", "pöytä", "käsi", "(sinä)", "kädessä", "puolustaa"):  # fmt: skip
        assert word in text, word
    table_part = "\n".join(line for line in text.split("\n") if ":" not in line)  # not the log
    assert not ENGLISH_LABELS.search(table_part), table_part
    assert all(len(line) <= 80 for line in text.split("\n"))


def test_english_is_byte_identical_before_and_after_finnish() -> None:
    game = _game()
    before = render_table(game.view(2), NAMES, color=True)
    rules = rules_text("kaavi")
    i18n.use_language("fi")
    try:
        assert render_table(game.view(2), NAMES, color=True) != before
        assert rules_text("kaavi") != rules
    finally:
        assert i18n.use_language("en") == "en"
    assert render_table(game.view(2), NAMES, color=True) == before
    assert rules_text("kaavi") == rules
    assert "  greedy 1               6 cards   attacker" in before


def test_the_finnish_rules_fit_78_columns_and_keep_every_rule_id(finnish: None) -> None:
    from moska_p2p.engine import PRESETS

    ids = re.compile(r"\b(?:M|D|K|MM|C)\d+\b")
    for preset in PRESETS:
        finnish_text = rules_text(preset)
        i18n.use_language("en")
        english = rules_text(preset)
        i18n.use_language("fi")
        assert finnish_text != english
        assert all(len(line) <= 78 for line in finnish_text.split("\n")), preset
        assert sorted(ids.findall(finnish_text)) == sorted(ids.findall(english)), preset


# ---------------------------------------------------------------------- a person's reasons


def test_an_illegal_typed_move_gets_a_finnish_reason(finnish: None) -> None:
    game = _game()
    view, legal = game.view(2), game.legal_moves()
    said = {}
    for typed in ("attack 3H", "pass", "exchange", "kill 2C 3C", "zap", "k 9", "kill 3X 7H"):
        with pytest.raises(ValueError) as error:
            read_move(typed, view, legal)
        said[typed] = str(error.value)
    assert said["attack 3H"] == (
        "attack ei ole nyt mahdollinen: sinun vuoro on puolustaa: tappaa tappamaton kortti"
        " tai nostaa"
    )
    assert said["pass"].startswith("sinun vuoro on puolustaa tappamattomia kortteja vastaan")
    assert "pientä valttia 2H" in said["exchange"]
    assert said["kill 2C 3C"] == "sinun kädessä ei ole korttia 3C"
    assert "tuntematon sana" in said["zap"]
    assert "ei ole kätesi kortti" in said["k 9"]
    assert "tuntematon maa" in said["kill 3X 7H"]
    for text in said.values():
        assert "seat" not in text and " you" not in text
    # The Finnish verbs are aliases of the notation's.
    assert str(read_move("nosta", view, legal)) == "take"


def test_in_english_the_reasons_are_the_engines_said_to_you() -> None:
    game = _game()
    with pytest.raises(ValueError, match=r"^attack is not possible now: you must defend"):
        read_move("attack 3H", game.view(2), game.legal_moves())


def _engine_texts() -> list[tuple[str, str]]:
    """Every message text the engine, the notation and the card parser can raise, as a
    regex of its shape (each formatted value: anything), with where it is."""
    out = []
    exceptions = {"IllegalMove", "MoveSyntaxError", "CardError", "HiddenCardError"}
    clauses = {"_expected", "_why_no_exchange"}
    for name in ("engine/play.py", "engine/moves.py", "engine/movegen.py", "cards.py"):
        path = ROOT / "moska_p2p" / name
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                texts: list[ast.expr] = []
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in exceptions
                    and node.args
                ):
                    texts = [node.args[0]]
                elif isinstance(node, ast.Return) and function.name in clauses and node.value:
                    texts = [node.value]
                for text in texts:
                    if isinstance(text, ast.Constant) and isinstance(text.value, str):
                        out.append((re.escape(text.value), f"{name}:{node.lineno}"))
                    elif isinstance(text, ast.JoinedStr):
                        shape = "".join(
                            re.escape(part.value)
                            if isinstance(part, ast.Constant)
                            else ".*?"
                            for part in text.values
                        )
                        out.append((shape, f"{name}:{node.lineno}"))
    return out


def test_every_engine_reason_a_person_can_get_has_a_finnish_pattern(finnish: None) -> None:
    """Read from the engine's source, so a new engine text without a pattern fails here."""
    texts = _engine_texts()
    assert len(texts) > 50
    examples = [e for r in reasons.PATTERNS for e in r.examples]
    clauses = [r for r in reasons.PATTERNS if not r.examples]
    for shape, where in texts:
        fitting = [e for e in examples if re.fullmatch(shape, e)]
        fitting += [
            # a clause (what the seat must do): its own text, a card for a value
            re.sub(r"\.\*\?", "7H", shape).replace("\\", "")
            for r in clauses
            if re.fullmatch(shape, re.sub(r"\.\*\?", "7H", shape).replace("\\", ""))
            and r.pattern.match(re.sub(r"\.\*\?", "7H", shape).replace("\\", ""))
        ]
        assert fitting, f"{where}: no example of {shape!r} in ui/reasons.py"
        for text in fitting:
            said = reasons.translate(text, 0)
            assert said is not None and said != text, (where, text)


def test_each_example_is_its_own_patterns_and_comes_out_finnish(finnish: None) -> None:
    english = re.compile(r"\b(is|not|the|must|may|does|seat|you|card|cards|with|or)\b")
    for reason in reasons.PATTERNS:
        if not reason.examples:
            assert reasons.translate(reason.template.replace("{card}", "7H"), 0), reason
            continue
        for example in reason.examples:
            found = reasons.match(example)
            assert found is not None and found[0] is reason, example
            said = reasons.translate(example, 0)
            assert said is not None
            # Left in English only: the notation's words and usages (typed in English).
            plain = re.sub(r"'[^']*'|\"[^\"]*\"|\([^)]*\)|\b(attack|kill|take|pass|exchange|"
                           r"deck-kill|transfer|show|self|beg|deck)\b", "", said)  # fmt: skip
            assert not english.search(plain), (example, said)
    assert reasons.translate("seat 2 does not hold 7H", 0) == "paikan 2 kädessä ei ole korttia 7H"


# ---------------------------------------------------------------------- questions


def test_yes_is_k_or_kylla_in_finnish_and_only_y_in_english(finnish: None) -> None:
    def answer(text: str) -> bool:
        out = io.StringIO()
        person = TerminalPlayer(NAMES, stdin=io.StringIO(text + "\n"), stdout=out,
                                interactive=False)  # fmt: skip
        result = person.ask_yes(i18n._("play again?"))
        assert "pelataanko uudestaan? [k/E]" in out.getvalue()
        return result

    assert answer("k") and answer("kyllä") and answer("y")
    assert not answer("e") and not answer("")
    i18n.use_language("en")
    person = TerminalPlayer(NAMES, stdin=io.StringIO("k\n"), stdout=io.StringIO(),
                            interactive=False)  # fmt: skip
    assert not person.confirm_leave()


# ---------------------------------------------------------------------- the program


def test_moska_rules_in_finnish_by_option_by_locale_and_by_config(tmp_path: Path) -> None:
    english = rules_text("moska") + "\n"
    by_option = _moska("--lang", "fi", "rules", "moska", LANG="C")
    by_locale = _moska("rules", "moska", LANG="fi_FI.UTF-8")
    config = tmp_path / "config.toml"
    config.write_text('lang = "fi"\n', encoding="utf-8")
    by_config = _moska("rules", "moska", LANG="C", MOSKA_CONFIG=str(config))
    for run in (by_option, by_locale, by_config):
        assert run.returncode == 0, run.stderr
        assert "Valttikortti" in run.stdout and "hyökkää" in run.stdout
        assert run.stdout != english
    assert by_option.stdout == by_locale.stdout == by_config.stdout
    plain = _moska("rules", "moska", LANG="C")
    assert plain.returncode == 0 and plain.stdout == english
    back = _moska("--lang", "en", "rules", "moska", LANG="fi_FI.UTF-8")
    assert back.stdout == english
    # A language there is no catalogue for: one line naming the file's line (the command
    # line's main() prints it as "error: ..." and exits 2).
    from moska_p2p.cli import build_command
    from moska_p2p.cli.config import ConfigError, default_map, load_config

    config.write_text('name = "alice"\nlang = "klingon"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config.toml: line 2: unknown language 'klingon'"):
        default_map(load_config(config), build_command())
    config.write_text('lang = "fi_FI"\n', encoding="utf-8")
    assert "rules" not in default_map(load_config(config), build_command())


def test_a_finnish_plain_game_says_why_a_move_was_not_played() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "--lang", "fi", "play", "--plain", "--preset",
         "durak", "--players", "2", "--seed", "1"],
        input="pass\nlopeta\n", capture_output=True, text=True, encoding="utf-8",
        env=_env(LANG="C"), cwd=str(ROOT), timeout=60,
    )  # fmt: skip
    assert run.returncode == 130, run.stderr
    assert "Sinun vuorosi:" in run.stdout and "sallitut: " in run.stdout
    assert "ei pelattu: " in run.stdout and "Poistuit pelistä." in run.stdout
    assert "Your move" not in run.stdout and "not played" not in run.stdout


def test_the_finnish_full_screen_table_on_a_terminal() -> None:
    term = Term(
        ["-m", "moska_p2p", "--lang", "fi", "play", "--preset", "mustamaija", "--players",
         "2", "--seed", "3", "--pace", "0", "--auto-pass", "0"],
        env=term_env(),
    )  # fmt: skip
    try:
        term.wait(r"^mustamaija · (?:valtti \S+|ei vielä valttia) · pakka \d+ · pois pelistä"
                  r" \d+ · siirto \d+", row=0)  # fmt: skip
        term.wait(r"Sinun vuorosi: ", row=term.rows - 3)
        term.wait(r"^sallitut: ", row=term.rows - 2)
        text = term.text()
        assert re.search(r"^käsi +1", text, re.M) and re.search(r"^pöytä", text, re.M)
        assert re.search(r"^(?:▶ |  )sinä +\d+ kortti", text, re.M), "the person is sinä"
        term.send("?")
        term.wait(r"^ohje · Esc tai q sulkee", row=0)
        assert "hyökkää" in term.text()
        term.send("q")
        term.wait(r"^mustamaija · ", row=0)
        term.send("zap\r")
        term.wait(r"^ei pelattu: ")  # the status, wrapped onto the rows it needs
        term.send("\x03")
        term.wait(r"^poistutaanko pelistä\? \[k/E\]", row=term.rows - 1)
        term.send("k\r")
        code = term.exit_code()
        assert "Poistuit pelistä." in term.text()
    finally:
        term.close()
    assert code == 130


# ---------------------------------------------------------------------- replay --plain


def test_replay_plain_steps_as_lines_on_a_terminal(tmp_path: Path) -> None:
    import json

    from moska_p2p.bots.builtin import GreedyBot
    from moska_p2p.table.local import play_game

    record = play_game(new_game("durak", players=2, seed=8), [GreedyBot(1), GreedyBot(2)])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record.to_json()))
    term = Term(["-m", "moska_p2p", "replay", "--plain", str(path)], env=term_env())
    try:
        term.wait(r"Enter: next · b: back · NUMBER: go to move · q: quit >")
        term.send("\r")
        term.wait(r"· move 1\b")
        term.send("q\r")
        code = term.exit_code()
        # Line mode: the steps stay in the terminal's output (no alternate screen).
        assert "\x1b[?1049h" not in "".join(term.raw)
    finally:
        term.close()
    assert code == 0

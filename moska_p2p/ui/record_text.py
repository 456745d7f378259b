"""A game as a readable, line-based text record, like PGN for chess (``docs/RECORD.md``).

``moska export`` writes one from an arena record or a verified peer transcript;
``moska replay`` reads it back (:func:`parse_record`) and shows the same states. Headers
first (``[Name "value"]``), then the moves in the rules' notation (RULES C6, the text
:meth:`~moska_p2p.engine.Game.play` accepts), one numbered move a line::

    [Format "moska-p2p record 1"]
    [Preset "durak"]
    ...
    1. seat 1: attack 7C
    2. seat 0: kill 7C 9C

An arena record knows every card, so its text carries the whole ``Deck`` and replays with
every hand open. A transcript shows only what was public: its text carries no deck but the
faces as they became public (``{public: 7H at deck position 14}`` lines, and ``{lowest trump
at deck position 3}`` for D3),
so it replays to the same public states. It has no signatures, so it is an *unverified
copy*: its replay says so on every screen, and only the original transcript can be verified.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..cards import CARD_TEXT, parse_card
from ..engine import Game, make_rules, new_game, new_hidden_game

if TYPE_CHECKING:
    from .replay_model import Replay

FORMAT = "moska-p2p record 1"
COPY_WARNING = "UNVERIFIED TEXT COPY (no signatures) of {source}"

_HEADER = re.compile(r'\[([A-Za-z][A-Za-z0-9]*) "((?:[^"\\]|\\.)*)"\]')
_MOVE = re.compile(r"(\d+)\. seat (\d+): (\S.*)")
_AT = r"\S+ at deck position \d+"
_FACES = re.compile(rf"\{{(?:faces( \d+=\S+)+|public: {_AT}(, {_AT})*)\}}")
"""A line of faces that became public: ``{public: 7H at deck position 14, ...}`` (and
``{faces 14=7H ...}``, the terser form records were first written with, still read)."""
_PUBLIC_ITEM = re.compile(r"(\S+) at deck position (\d+)")
_LOWEST = re.compile(r"\{lowest trump (?:at (?:deck position )?(\d+)|none)\}")
_ORDER = ("Format", "Preset", "Players", "Options", "Dealer", "FirstGame", "Date", "Source")


class RecordError(ValueError):
    """A text that is not a well-formed record, or whose moves do not replay: one line,
    naming the line of the text at fault."""


@dataclass
class TextRecord:
    """A text record read back: the fields of a :class:`~.replay_model.Replay`."""

    preset: str
    names: list[str]
    states: list[Game]
    moves: list[tuple[int, str]]
    full: bool
    owner: int = 0
    losers: list[int] = field(default_factory=list)
    warning: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _unquote(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def record_text(replay: Replay) -> str:
    """The text record of ``replay`` (from an arena record, a transcript or a text record).

    A transcript's faces are written as they became public between its moves; the text is
    then read back and must reach the very same public states, or this raises
    :class:`RecordError` (an export never writes a record that shows another game)."""
    first, last = replay.states[0], replay.states[-1]
    rules = first.rules
    options = " ".join(f"{k}={v}" for k, v in rules.options().items())
    computed = {"Format", "Moves", "Losers", "Result", "Deck", "Faces", "Verified"}
    headers: dict[str, str] = {
        "Format": FORMAT,
        "Preset": replay.preset,
        "Players": str(replay.players),
        "Options": options,
        "Dealer": str(first.dealer),
        "FirstGame": "yes" if first.first_game else "no",
    }
    for key, value in replay.headers.items():
        if key not in computed and not key.startswith("Seat"):
            headers.setdefault(key, value)
    for seat, name in enumerate(replay.names):
        headers[f"Seat{seat}"] = name
    losers = list(last.loser_seats) if last.is_over else list(replay.losers)
    headers["Losers"] = " ".join(str(s) for s in losers)
    if last.is_over:
        lost = ", ".join(f"seat {s}" for s in losers) or "nobody (a draw)"
        headers["Result"] = f"lost: {lost}"
    else:
        headers["Result"] = "not finished: " + headers.get("Termination", "the record ends")
    headers["Moves"] = str(len(replay.moves))
    if replay.full:
        headers["Deck"] = " ".join(CARD_TEXT[c] for c in first.face)
    else:
        faces = _faces_line(_hidden_like(first), first)
        if faces:
            headers["Faces"] = faces[len("{public: ") : -1]
        headers["Verified"] = (
            "no: a text copy without the signatures (its transcript verified when exported)"
        )
    order = [k for k in _ORDER if k in headers] + [k for k in headers if k not in _ORDER]
    lines = [f'[{key} "{_quote(headers[key])}"]' for key in order]
    lines.append("")
    body = list(_full_moves(replay)) if replay.full else list(_public_moves(replay))
    text = "\n".join(lines + body) + "\n"
    if not replay.full:
        again = parse_record(text)
        if [g.state_hash() for g in again.states] != [g.state_hash() for g in replay.states]:
            raise RecordError("the transcript's public states cannot be written as a record")
    return text


def _full_moves(replay: Replay) -> Iterator[str]:
    """An arena game's moves: its Deck header makes every face known already."""
    for number, (seat, text) in enumerate(replay.moves, 1):
        yield f"{number}. seat {seat}: {text}"


def _faces_line(game: Game, target: Game) -> str:
    """The faces ``target`` knows that ``game`` does not yet, as a ``{public: ...}`` line:
    each card and its deck position (0 the top of the deck as dealt, RULES C4)."""
    new = [(pos, card) for pos, card in enumerate(target.face) if card >= 0 and game.face[pos] < 0]
    items = ", ".join(f"{CARD_TEXT[c]} at deck position {p}" for p, c in new)
    return "{public: " + items + "}" if new else ""


def _public_moves(replay: Replay) -> Iterator[str]:
    """A transcript's moves with the faces that became public before each, rebuilt on a
    hidden-face engine as the observer's was; D3's shown trump found by trying each
    candidate against the observer's next state."""
    first = replay.states[0]
    game = _hidden_like(first)
    line = _faces_line(game, first)
    if line:  # the Faces header
        _apply_faces(game, line, 0)
    for number, (seat, text) in enumerate(replay.moves, 1):
        target = replay.states[number]
        line = _faces_line(game, target)
        if line:
            yield line
            _apply_faces(game, line, 0)
        if game.awaiting_lowest_trump:
            choice = _find_lowest_trump(game, seat, text, target)
            at = "none" if choice is None else f"at deck position {choice}"
            yield f"{{lowest trump {at}}}"
            game.declare_lowest_trump(choice)
        game.play(text, seat=seat)
        yield f"{number}. seat {seat}: {text}"


def _find_lowest_trump(game: Game, seat: int, text: str, target: Game) -> int | None:
    """The position D3's shown trump was at: the transcript's states do not name it (the
    first move may even lay it), so each known trump in a hand, and none, is tried until
    the first move reaches the observer's state."""
    trump = game.trump
    candidates: list[int | None] = [
        pos
        for pos, card in enumerate(game.face)
        if card >= 0 and card & 3 == trump and any(game.hands[s] >> card & 1 for s in range(game.n))
    ]
    candidates.append(None)
    for choice in candidates:
        trial = game.copy()
        try:
            trial.declare_lowest_trump(choice)
            trial.play(text, seat=seat)
        except ValueError:
            continue
        if trial.state_hash() == target.state_hash():
            return choice
    raise RecordError("the transcript's first attacker (D3) cannot be written as a record")


def _hidden_like(game: Game) -> Game:
    """A fresh all-hidden engine for the table of ``game``, as an observer peer starts."""
    return new_hidden_game(
        game.rules.preset,
        game.n,
        dealer=game.dealer,
        first_game=game.first_game,
        **game.rules.options(),
    )


def _apply_faces(game: Game, line: str, number: int) -> None:
    """Reveal the faces of a ``{public: CARD at deck position P, ...}`` line (or of the
    older ``{faces P=CARD ...}``), those the game waits for first (a card turned may ask
    for the next one, MM2), as the observer learnt them."""
    pending: dict[int, int] = {}
    if line.startswith("{public: "):
        items = [
            f"{m.group(2)}={m.group(1)}" for m in _PUBLIC_ITEM.finditer(line[len("{public: ") :])
        ]
    else:
        items = line[len("{faces ") : -1].split()
    for item in items:
        pos_text, _, card_text = item.partition("=")
        try:
            pending[int(pos_text)] = parse_card(card_text)
        except ValueError as error:
            raise RecordError(
                f"line {number}: {item!r} is not a card and its deck position: {error}"
            ) from None
    try:
        while pending:
            waited = [p for p in game.awaiting if p in pending]
            pos = waited[0] if waited else min(pending)
            game.reveal(pos, pending.pop(pos))
    except ValueError as error:
        raise RecordError(f"line {number}: {error}") from None


def _faces_of_header(value: str) -> str:
    """The ``Faces`` header as a line of faces (either form)."""
    return ("{public: " if " at deck position " in value else "{faces ") + value + "}"


def parse_record(text: str) -> TextRecord:
    """Read a text record back into the states it records (the module docstring)."""
    headers: dict[str, str] = {}
    body: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("["):
            match = _HEADER.fullmatch(line)
            if match is None:
                raise RecordError(f'line {number}: not a header [Name "value"]: {line[:60]}')
            if body:
                raise RecordError(f"line {number}: a header after the moves")
            headers[match.group(1)] = _unquote(match.group(2))
        else:
            body.append((number, line))
    if headers.get("Format") != FORMAT:
        raise RecordError(f'not a text record: its first header must be [Format "{FORMAT}"]')
    game = _start(headers)
    players = game.n
    names = [headers.get(f"Seat{s}", f"seat {s}") for s in range(players)]
    full = "Deck" in headers
    if not full and headers.get("Faces"):
        _apply_faces(game, _faces_of_header(headers["Faces"]), 0)  # known at the deal
    states = [game.copy()]
    moves: list[tuple[int, str]] = []
    for number, line in body:
        # Faces and D3 lines come before the move that follows them: the state after each
        # move stays what the observer knew right then, as in a transcript's replay.
        if not full and _FACES.fullmatch(line):
            _apply_faces(game, line, number)
            continue
        lowest = _LOWEST.fullmatch(line)
        if not full and lowest:
            try:
                game.declare_lowest_trump(int(lowest.group(1)) if lowest.group(1) else None)
            except ValueError as error:
                raise RecordError(f"line {number}: {error}") from None
            continue
        match = _MOVE.fullmatch(line)
        if match is None:
            raise RecordError(f"line {number}: not a move 'N. seat S: MOVE': {line[:60]}")
        if int(match.group(1)) != len(moves) + 1:
            raise RecordError(
                f"line {number}: move {match.group(1)} where move {len(moves) + 1} was due"
            )
        seat, move = int(match.group(2)), match.group(3).strip()
        try:
            played = game.play(move, seat=seat)
        except ValueError as error:
            raise RecordError(f"line {number}: move {len(moves) + 1} ({move}): {error}") from None
        moves.append((seat, str(played)))
        states.append(game.copy())
    declared = headers.get("Moves", "")
    if not declared.isdigit() or int(declared) != len(moves):
        raise RecordError(
            f'the record has {len(moves)} moves but its header says [Moves "{declared}"]:'
            " it is cut short or edited"
        )
    losers = [int(s) for s in headers.get("Losers", "").split() if s.isdigit()]
    record = TextRecord(game.rules.preset, names, states, moves, full, 0, losers, "", headers)
    if not full:
        writer = re.match(r"seat (\d+)", headers.get("Writer", ""))
        if writer and int(writer.group(1)) < players:
            record.owner = int(writer.group(1))
        record.warning = COPY_WARNING.format(source=headers.get("Source", "a transcript"))
    return record


def _start(headers: dict[str, str]) -> Game:
    """The game the headers describe, before its first move."""
    for key in ("Preset", "Players", "Dealer", "Moves"):
        if key not in headers:
            raise RecordError(f'the record has no [{key} "..."] header')
    try:
        options: dict[str, Any] = {}
        for item in headers.get("Options", "").split():
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"option {item!r} is not NAME=VALUE")
            options[name] = value
        preset, players, dealer = headers["Preset"], int(headers["Players"]), int(headers["Dealer"])
        first_game = headers.get("FirstGame", "yes") != "no"
        make_rules(preset, **options)
        if not 0 <= dealer < players:
            raise ValueError(f"no seat {dealer} at a table of {players}")
        if "Deck" in headers:
            return new_game(
                preset,
                players=players,
                deck=headers["Deck"].split(),
                dealer=dealer,
                first_game=first_game,
                **options,
            )
        return new_hidden_game(preset, players, dealer=dealer, first_game=first_game, **options)
    except ValueError as error:
        raise RecordError(f"the headers do not describe a game: {error}") from None

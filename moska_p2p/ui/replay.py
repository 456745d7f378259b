"""Replays: step through a saved game in the same table view as live play.

Two sources. An arena game saved with ``moska arena --save`` (JSON) holds the whole deck,
so every state is known. A peer's transcript (``.moska``) holds only signed frames: it is
replayed by an observer :class:`~moska_p2p.protocol.session.PeerSession`, as ``moska
verify`` does, and shown as that observer saw it: public cards only. Protocol v2 never
reveals a secret at the end, so a card nobody showed stays hidden in a replay too; a
transcript with a frame that does not check is refused, never shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..engine import Game, new_game
from .render import Style, color_wanted, move_text, render_table, strip_ansi, symbols_wanted

CLEAR = "\x1b[H\x1b[2J"


class ReplayError(ValueError):
    """A file that cannot be replayed, with the reason."""


@dataclass
class Replay:
    """A game as a list of states: ``states[0]`` before the first move, ``states[i]``
    after move ``i`` (``moves[i - 1]``)."""

    preset: str
    names: list[str]
    states: list[Game]
    moves: list[tuple[int, str]]
    full: bool  # every face known: any seat's view and open hands are possible
    owner: int = 0  # the seat whose view to show by default (a transcript's writer)
    source: str = ""
    losers: list[int] = field(default_factory=list)

    @property
    def players(self) -> int:
        return len(self.names)


def load_replay(path: Path) -> Replay:
    """Read an arena saved game (JSON) or a peer transcript (anything else)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReplayError(f"cannot read {path}: {error}") from None
    if data.lstrip()[:1] == b"{":
        try:
            record = json.loads(data)
        except ValueError as error:
            raise ReplayError(f"{path} is not a saved game: {error}") from None
        try:
            return replay_of_record(record, source=str(path))
        except (OverflowError, TypeError, ValueError) as error:
            if isinstance(error, ReplayError):
                raise
            raise ReplayError(f"{path} is not a saved game: {error}") from None
    return replay_of_transcript(path)


def replay_of_record(record: dict[str, object], source: str = "") -> Replay:
    """The states of an arena saved game (``GameRecord.to_json``)."""
    try:
        preset = str(record["preset"])
        players = int(record["players"])  # type: ignore[call-overload]
        options = dict(record.get("options") or {})  # type: ignore[call-overload]
        game = new_game(
            preset,
            players=players,
            deck=record["deck"],  # type: ignore[arg-type]
            dealer=int(record["dealer"]),  # type: ignore[call-overload]
            **options,
        )
        moves = [(int(seat), str(text)) for seat, text in record["moves"]]  # type: ignore[attr-defined]
        bots = list(record.get("bots") or [])  # type: ignore[call-overload]
    except (KeyError, TypeError, ValueError) as error:
        raise ReplayError(f"not a saved game: {error!r}") from None
    names = [
        f"{str(bots[s]).split(':')[0]} {s}" if s < len(bots) else f"seat {s}"
        for s in range(players)
    ]
    states = [game.copy()]
    for number, (seat, text) in enumerate(moves, 1):
        try:
            game.play(text, seat=seat)
        except ValueError as error:
            raise ReplayError(f"move {number} ({text}) does not replay: {error}") from None
        states.append(game.copy())
    return Replay(preset, names, states, moves, True, 0, source, list(game.losers))


def replay_of_transcript(path: Path) -> Replay:
    """The states of a peer transcript, through an observer session (module docstring)."""
    from ..crypto.identity import fingerprint_of
    from ..protocol import verdict as v
    from ..protocol.session import PeerSession
    from ..protocol.transcript import TranscriptError, read_transcript

    try:
        owner, config, roster, frames = read_transcript(path)
        observer = PeerSession(None, config, roster)
    except (TranscriptError, ValueError) as error:
        raise ReplayError(f"{path}: {error}") from None
    hidden: list[Game] = []
    fault = ""
    for index, frame in enumerate(frames):
        for out in observer.receive(frame):
            if isinstance(out, v.Rejected):
                # A frame that does not check (a forged signature, a flipped bit) makes the
                # file untrustworthy: showing its moves would present a forgery as a game.
                raise ReplayError(f"{path}: frame {index}: {out.reason} (see moska verify)")
            elif isinstance(out, v.Stopped) and not fault:
                fault = f"frame {index}: {out.verdict.describe()}"
        game = observer.game
        if game is not None and len(hidden) == len(observer.moves):
            hidden.append(game.copy())  # the deal, then the state after each move
    if observer.game is None or not observer.seats:
        raise ReplayError(f"{path}: the transcript ends before the deal ({fault or 'no game'})")
    names = [observer.peers[key].name or fingerprint_of(key) for key in observer.seats]
    moves = list(observer.moves)
    owner_seat = observer.seat_of.get(owner, 0)
    source = str(path)
    while len(hidden) < len(moves) + 1:  # pragma: no cover - one copy per move above
        hidden.append(hidden[-1])
    return Replay(
        config.preset, names, hidden[: len(moves) + 1], moves, False, owner_seat, source, []
    )


def frame_text(
    replay: Replay,
    step: int,
    seat: int,
    *,
    open_hands: bool,
    color: bool,
    symbols: bool,
) -> str:
    """The table at ``step`` as ``seat`` saw it (all hands open with ``open_hands``), with a
    line saying which move led there."""
    game = replay.states[step]
    view = game.view(seat)
    hands = {s: game.hand(s) for s in range(replay.players)} if open_hands else None
    over = step == len(replay.moves) and game.is_over
    table = render_table(
        view,
        replay.names,
        color=color,
        symbols=symbols,
        hands=hands,
        losers=list(game.losers) if over else None,
        you=-1,
        title=f"{replay.preset} replay",
    )
    total = len(replay.moves)
    if step == 0:
        what = f"the deal (dealer: {replay.names[game.dealer]}); {total} moves follow"
    else:
        mover, text = replay.moves[step - 1]
        shown = move_text(text, Style(color=False, symbols=symbols))
        what = f"move {step} of {total}: {replay.names[mover]} played {shown}"
    if over:
        losers = ", ".join(replay.names[s] for s in game.losers) or "nobody (a draw)"
        what += f"; game over, lost: {losers}"
    return table + "\n" + what


def run_replay(
    replay: Replay,
    *,
    seat: int | None = None,
    open_hands: bool = False,
    interactive: bool,
    out: TextIO,
    color: bool | None = None,
    read: Callable[[str], str] = input,
) -> None:
    """Show the replay: on a terminal step by step (Enter next, ``b`` back, a number to go
    to that move, ``q`` quit); otherwise every step, one after the other."""
    if seat is None:
        seat = replay.owner
    if not 0 <= seat < replay.players:
        raise ReplayError(f"no seat {seat}: the game had seats 0 to {replay.players - 1}")
    if open_hands and not replay.full:
        raise ReplayError(
            "the transcript ends before its audit, so the hidden cards were never revealed:"
            " --open is not possible"
        )
    use_color = color_wanted(out) if color is None else color
    symbols = symbols_wanted(out)

    def show(step: int, clear: bool) -> None:
        text = frame_text(
            replay, step, seat, open_hands=open_hands, color=use_color, symbols=symbols
        )
        if not use_color:
            text = strip_ansi(text)
        out.write((CLEAR if clear else "") + text + "\n")
        out.flush()

    last = len(replay.moves)
    if not interactive:
        for step in range(last + 1):
            show(step, False)
            out.write("\n")
        return
    step = 0
    message = ""
    while True:
        show(step, True)
        if message:
            out.write(message + "\n")
        prompt = "Enter: next · b: back · NUMBER: go to move · q: quit > "
        try:
            answer = read(prompt if symbols else prompt.replace("·", "|")).strip().lower()
        except (EOFError, KeyboardInterrupt):
            out.write("\n")
            return
        message = ""
        if answer in ("q", "quit", "exit"):
            return
        if answer in ("", "n", "next"):
            if step == last:
                message = "That was the last move (b: back, q: quit)."
            step = min(last, step + 1)
        elif answer in ("b", "back"):
            step = max(0, step - 1)
        elif answer.isdigit():
            step = min(last, int(answer))
        elif answer in ("e", "end"):
            step = last
        else:
            message = f'"{answer}"? Enter: next, b: back, a move number, q: quit.'

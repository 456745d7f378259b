"""Replays: step through a saved game in the same table view as live play.

Two sources. An arena game saved with ``moska arena --save`` (JSON) holds the whole deck,
so every state is known. A peer's transcript (``.moska``) holds only signed frames: it is
replayed by an observer :class:`~moska_p2p.protocol.session.PeerSession`, as ``moska
verify`` does, and shown as that observer saw it: public cards only. Protocol v2 never
reveals a secret at the end, so a card nobody showed stays hidden in a replay too; a
transcript that ``moska verify`` rejects is refused with verify's own fault, never shown as
if it were genuine; asked explicitly (``unverified=True``) it is shown up to its fault, with
a warning naming that fault on every screen. A text record (``moska export``,
:mod:`.record_text`) is read back too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..engine import Game, new_game
from .render import Style, color_wanted, move_text, render_table, strip_ansi, symbols_wanted
from .replay_model import Replay

if TYPE_CHECKING:
    from ..protocol.deck_phase import DeckPhase
    from ..protocol.session import PeerSession

CLEAR = "\x1b[H\x1b[2J"


class ReplayError(ValueError):
    """A file that cannot be replayed, with the reason."""


class NotVerified(ReplayError):
    """A transcript ``moska verify`` rejects: its fault, the same text verify prints
    (:attr:`fault`; :attr:`path`, the file)."""

    def __init__(self, message: str, path: Path, fault: str) -> None:
        super().__init__(message)
        self.path, self.fault = path, fault


def load_replay(
    path: Path,
    *,
    unverified: bool = False,
    secrets: Sequence[bytes] = (),
    incomplete: bool = False,
) -> Replay:
    """Read an arena saved game (JSON), a text record (``moska export``) or a peer
    transcript (anything else; refused unless it verifies, see the module docstring);
    ``secrets``: the per-game secrets found beside a transcript (:class:`OwnCards`);
    ``incomplete``: show a transcript whose writer stopped early, marked."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReplayError(f"cannot read {path}: {error.strerror or error}") from None
    head = data.lstrip()[:1]
    if head == b"{":
        try:
            record = json.loads(data)
        except ValueError as error:
            raise ReplayError(f"{path} is not a saved game: {error}") from None
        try:
            replay = replay_of_record(record, source=str(path))
            replay.headers["Date"] = _file_date(path)
            return replay
        except (OverflowError, TypeError, ValueError) as error:
            if isinstance(error, ReplayError):
                raise
            raise ReplayError(f"{path} is not a saved game: {error}") from None
    if head == b"[":
        from .record_text import RecordError, parse_record

        try:
            text = parse_record(data.decode("utf-8"))
            return Replay(
                preset=text.preset,
                names=text.names,
                states=text.states,
                moves=text.moves,
                full=text.full,
                owner=text.owner,
                source=str(path),
                losers=text.losers,
                warning=text.warning,
                headers=text.headers,
            )
        except UnicodeDecodeError:
            raise ReplayError(f"{path} is not a text record: it is not UTF-8 text") from None
        except RecordError as error:
            raise ReplayError(f"{path}: {error}") from None
    replay = replay_of_transcript(
        path, unverified=unverified, secrets=secrets, incomplete=incomplete
    )
    replay.headers["Date"] = _file_date(path)
    return replay


def _file_date(path: Path) -> str:
    """The day (UTC) ``path`` was last written, as a text record's ``Date`` (YYYY.MM.DD)."""
    import datetime

    stamp = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.UTC)
    return stamp.strftime("%Y.%m.%d")


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
        forfeit, reason = record.get("forfeit"), str(record.get("reason") or "")
        unfinished = bool(record.get("unfinished"))
        recorded = [int(s) for s in record.get("losers") or []]  # type: ignore[attr-defined]
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
    headers = {"Source": f"arena record {Path(source).name}" if source else "arena record"}
    if isinstance(forfeit, int) and not isinstance(forfeit, bool):
        headers["Termination"] = f"seat {forfeit} forfeited" + (f": {reason}" if reason else "")
    elif unfinished:
        headers["Termination"] = "unfinished (past the arena's --max-moves)"
    losers = list(game.loser_seats) if game.is_over else recorded  # a forfeit ends it early
    replay = Replay(preset, names, states, moves, True, 0, source, losers)
    replay.headers = headers
    return replay


def replay_of_transcript(
    path: Path,
    *,
    unverified: bool = False,
    secrets: Sequence[bytes] = (),
    incomplete: bool = False,
) -> Replay:
    """The states of a peer transcript, through an observer session, once
    :func:`~moska_p2p.protocol.transcript.verify_transcript` (``moska verify``'s own check,
    so the two always agree) has accepted it; with ``unverified``, a rejected file is shown
    up to its fault with :attr:`Replay.warning` naming it; with ``incomplete``, a file whose
    writer stopped early (every frame of it checks) is shown, marked so."""
    from ..protocol.transcript import INCOMPLETE, verify_transcript

    report = verify_transcript(path)
    if report.valid:
        replay = transcript_states(path, secrets)
        replay.headers["Verified"] = "yes (moska verify)"
        if report.verdict:
            replay.headers["Termination"] = f"stopped: {report.verdict}"
        return replay
    fault = report.fault or "it does not verify"
    if incomplete and report.status == INCOMPLETE:  # every frame checks, and it stops early
        replay = transcript_states(path, secrets)
        stopped = fault.removeprefix(f"{INCOMPLETE}: ").split(": ", 1)[0]
        replay.warning = f"INCOMPLETE: {stopped}"
        return replay
    if not unverified:
        raise NotVerified(
            f"{path}: {fault}; moska verify rejects this transcript, so it is not replayed"
            " (--unverified shows it, marked)",
            path,
            fault,
        )
    try:
        replay = transcript_states(path, secrets)
    except ReplayError:
        raise NotVerified(f"{path}: {fault}; no move comes before the fault", path, fault) from None
    replay.warning = f"NOT VERIFIED: {fault}"
    return replay


def transcript_states(path: Path, secrets: Sequence[bytes] = ()) -> Replay:
    """Every state an observer session reaches on the transcript's frames, in file order,
    up to the first frame it rejects (the caller has verified the file, or marks it); with
    the writer's per-game secret among ``secrets``, its own cards open (:class:`OwnCards`)."""
    from ..crypto.identity import fingerprint_of
    from ..protocol import verdict as v
    from ..protocol.session import PeerSession
    from ..protocol.transcript import TranscriptError, read_transcript

    try:
        owner, config, roster, frames = read_transcript(path, cut_off=True)  # up to a cut
        observer = PeerSession(None, config, roster)
    except (TranscriptError, ValueError) as error:
        raise ReplayError(f"{path}: {error}") from None
    hidden: list[Game] = []
    own: OwnCards | None = None
    for frame in frames:
        before = len(observer.transcript)
        try:
            outputs = observer.receive(frame)
        except ValueError:  # the verifier's own failure: verify names it, nothing to show
            break
        if any(isinstance(out, v.Rejected) for out in outputs):
            break  # a frame that does not check shows nothing (verify names it)
        game = observer.game
        if game is not None and len(hidden) == len(observer.moves):
            hidden.append(game.copy())  # the deal, then the state after each move
            if own is None and observer.deck is not None and observer.game_id is not None:
                own = OwnCards.of_writer(secrets, observer, owner)
        if own is not None and hidden:
            own.open_in(hidden[-1])  # its cards as they came, before its next move
        if any(isinstance(out, v.Stopped) for out in outputs):
            break  # the game stopped here (a verdict); nothing after it is part of it
        if len(observer.transcript) != before + 1:
            break  # a frame that cannot apply here (verify: "out of order"), nor any after
    if observer.game is None or not observer.seats or not hidden:
        raise ReplayError(f"{path}: the transcript ends before the deal, so there is no game")
    names = [observer.peers[key].name or fingerprint_of(key) for key in observer.seats]
    moves = list(observer.moves)[: len(hidden) - 1]
    owner_seat = observer.seat_of.get(owner, 0)
    replay = Replay(
        config.preset, names, hidden, moves, False, owner_seat, str(path), list(observer.losers)
    )
    replay.opened = owner_seat if own is not None else None
    replay.headers = {"Source": f"transcript {path.name}", "Verified": "no"}
    if observer.game_id:
        replay.headers["Table"] = observer.game_id.hex()
    for seat, key in enumerate(observer.seats):
        replay.headers[f"Fingerprint{seat}"] = fingerprint_of(key)
    replay.headers["Writer"] = f"seat {owner_seat} ({fingerprint_of(owner)})"
    return replay


class OwnCards:
    """The cards a transcript's writer was dealt, opened with its own keys.

    A transcript is made for anyone to check, so it never opens a player's private draws:
    each came with every other seat's key, and only the drawing seat's own key, which it
    never sends, opens it. That key derives from the writer's per-game secret (PROTOCOL.md,
    secrets and resuming), which its node keeps beside the transcript, mode 0600:
    ``GAME.moska.secret`` once the game is over, ``GAME.moska.resume`` while it could still
    be resumed (a crash, a cut). Given the writer's transcript with that file, the replay shows
    its hand as it saw it; anyone else's copy of the transcript shows public cards only."""

    def __init__(self, keys: tuple[bytes, ...], seat: int, deck: DeckPhase) -> None:
        self.keys, self.seat, self.deck = keys, seat, deck
        self.opened: dict[int, int] = {}  # deck position -> card

    @classmethod
    def of_writer(
        cls, secrets: Sequence[bytes], observer: PeerSession, owner: bytes
    ) -> OwnCards | None:
        """The writer's keys, from the one of ``secrets`` that is its per-game secret, once
        the deck is dealt; None if none is (its first key does not match the key point the
        writer published)."""
        from ..crypto.deck import DeckSecrets, check_key
        from ..protocol.drbg import drbg

        deck, seat = observer.deck, observer.seat_of.get(owner, -1)
        if deck is None or observer.game_id is None or not 0 <= seat < len(deck.key_points):
            return None
        for secret in secrets:
            if len(secret) != 32:
                continue
            draw = drbg(secret)
            draw(32), draw(32)  # the seating nonce and seat secret come first (§8.5)
            mine = DeckSecrets.from_seed(draw(32), observer.game_id, seat, deck.size)
            if check_key(mine.keys[0], deck.key_points[seat][0]):
                return cls(mine.keys, seat, deck)
        return None

    def open_in(self, game: Game) -> None:
        """Turn up, in ``game``, every card of the writer's own draws whose other keys are
        in (a public card is the observer's own to open)."""
        for pos, holder in list(game.hidden_owner.items()):
            if holder != self.seat or game.public[pos]:
                continue
            card = self.opened.get(pos)
            if card is None:
                keys = self.deck.keys_for(pos, {self.seat: self.keys[pos]})
                card = self.deck.open(pos, keys) if keys is not None else None
                if card is None:
                    continue
                self.opened[pos] = card
            game.reveal(pos, card)


def whose_view(replay: Replay, seat: int, open_hands: bool) -> str:
    """The line under a replay's table: whose view it shows, and what of it is open."""
    writer = seat == replay.owner and not replay.full
    name = f"seat {seat} ({replay.names[seat]}{', who wrote this transcript' if writer else ''})"
    if open_hands:
        return f"every hand open, following {name}"
    if replay.full or replay.opened == seat:
        return f"the view of {name}: its own cards as it saw them"
    if writer:
        secret = f"{Path(replay.source).name}.secret"
        why = f"its own open with the {secret} its node keeps beside the transcript"
    else:
        why = "a transcript opens only its writer's own cards"
    return f"the view of {name}: public cards only ({why})"


def frame_text(
    replay: Replay,
    step: int,
    seat: int,
    *,
    open_hands: bool,
    color: bool,
    symbols: bool,
    width: int = 80,
    height: int = 20,
) -> str:
    """The table at ``step`` as ``seat`` saw it (all hands open with ``open_hands``), with a
    line saying which move led there (the last line). ``width`` and ``height`` as in
    :func:`~.render.render_table` (the full-screen replay draws its own log: height 0)."""
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
        losers=list(game.loser_seats) if over else None,
        you=-1,
        title=f"{replay.preset} replay",
        width=width,
        height=height,
    )
    total = len(replay.moves)
    if step == 0:
        what = f"the deal (dealer: {replay.names[game.dealer]}); {total} moves follow"
    else:
        mover, text = replay.moves[step - 1]
        shown = move_text(text, Style(color=False, symbols=symbols))
        what = f"move {step} of {total}: {replay.names[mover]} played {shown}"
    if over:
        losers = ", ".join(replay.names[s] for s in game.loser_seats) or "nobody (a draw)"
        what += f"; game over, lost: {losers}"
    table += f"\n{whose_view(replay, seat, open_hands)}"  # under the hand it speaks of
    if replay.warning:  # on every screen: an unverified file is never taken for a game
        table = f"!! {replay.warning} !!\n{table}"
    return table + "\n" + what


def run_replay(
    replay: Replay,
    *,
    seat: int | None = None,
    open_hands: bool = False,
    interactive: bool,
    out: TextIO,
    color: bool | None = None,
    read: Callable[[str], str] | None = None,
) -> None:
    """Show the replay: on a terminal step by step in the full-screen table (Enter or n
    next, ``b`` back, a number to go to that move, ``e`` the end, ``q`` quit; ``read``
    given: the same questions as lines, each step printed), otherwise every step, one after
    the other."""
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
    if interactive and read is None:
        _run_full_screen(replay, seat, open_hands, use_color, symbols)
        return
    if read is None:
        read = input
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
        if answer in ("q", "quit", "exit"):
            return
        step, message = _next_step(answer, step, last)


def _run_full_screen(
    replay: Replay, seat: int, open_hands: bool, color: bool, symbols: bool
) -> None:
    """The replay in the full-screen table (:mod:`.app`): the table at each step, the log
    of the moves so far, and single keys to step (Enter/n, b, e, q; a number and Enter)."""
    from .app import FullScreen
    from .render import log_lines

    screen = FullScreen(color=color, symbols=symbols)
    screen.single_keys = {"n": "n", "b": "b", "q": "q", "e": "e", "right": "n", "left": "b"}
    last = len(replay.moves)
    step, message = 0, ""
    prompt = "n/Enter next · b back · NUMBER go to · e end · q quit > "
    if not symbols:
        prompt = prompt.replace("·", "|")
    screen.start()
    try:
        while True:
            parts = frame_text(
                replay, step, seat, open_hands=open_hands, color=color, symbols=symbols
            ).rsplit("\n", 1)
            view = replay.states[step].view(seat)
            screen.show(
                lambda width, _, step=step: frame_text(  # type: ignore[misc]
                    replay,
                    step,
                    seat,
                    open_hands=open_hands,
                    color=color,
                    symbols=symbols,
                    width=width,
                    height=0,
                ).rsplit("\n", 1)[0],
                0,
                log_lines(
                    view.history,
                    replay.names,
                    color=color,
                    symbols=symbols,
                    trump=view.trump,
                    width=200,
                ),
            )
            screen.status(message or parts[-1])
            try:
                answer = screen.ask(prompt)
            except (EOFError, KeyboardInterrupt):
                return
            answer = answer.strip().lower()
            if answer in ("q", "quit", "exit"):
                return
            step, message = _next_step(answer, step, last)
    finally:
        screen.stop()


def _next_step(answer: str, step: int, last: int) -> tuple[int, str]:
    """The step a replay's answer leads to (line mode and full screen alike), and what to
    say about it ("" if nothing); quitting is the caller's."""
    if answer in ("", "n", "next"):
        message = "That was the last move (b: back, q: quit)." if step == last else ""
        return min(last, step + 1), message
    if answer in ("b", "back"):
        return max(0, step - 1), ""
    if answer.isdigit():
        return min(last, int(answer)), ""
    if answer in ("e", "end"):
        return last, ""
    return step, f'"{answer}"? Enter: next, b: back, a move number, q: quit.'

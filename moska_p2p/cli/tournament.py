"""``moska tournament``: a club event of several tables and rounds, with no referee.

``moska tournament direct`` opens the event (its settings, who may enter), announces it on
the LAN while its entry is open, and carries the statements; ``moska tournament enter
HOST:PORT`` (or the event's invite, when the event meets at a relay too, or with no address:
an event found on the LAN) enters it, as the person at the terminal or as a bot, and plays
each round's table on its own (docs/TOURNAMENT.md).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..engine import PRESETS
from ..i18n import _
from .common import EXIT_FAILED, EXIT_INTERRUPTED, check_bots, fail, is_interrupt

if TYPE_CHECKING:
    import trio

    from ..crypto.identity import Identity
    from ..event import FoundEvent
    from ..net.invite import Invite
    from ..tournament import BoardState
    from ..ui import BoardScreen


def _print_board(board: BoardState, you: bytes | None = None, live: bool = True) -> None:
    """The standings board, printed at 80 columns (bots, the director, plain output, and a
    person between its tables): after each round, and, when ``live``, as a round is seated
    (who plays where)."""
    from ..tournament import PLAYING
    from ..ui import render_board, symbols_wanted

    playing = any(table.state == PLAYING for table in board.tables)
    if playing and not live:
        return
    if board.finished:
        typer.echo(_("standings after the final table") if board.spec.final_size else
                   _("final standings"))  # fmt: skip
    elif not playing and board.round:
        typer.echo(_("standings after round {number}").format(number=board.round))
    for line in render_board(board, 80, you=you, symbols=symbols_wanted(sys.stdout)):
        typer.echo(line)
    typer.echo("")


class PersonBoard:
    """A person's standings board between its tables: full screen from a round's standings
    until the person's next table starts, the event ends, or q; then left on the terminal
    as text (as a table's screen leaves its last table). A round just seated is not shown
    here: the person's table takes the screen at once."""

    def __init__(self, you: bytes) -> None:
        self.you = you
        self.board: BoardScreen | None = None
        self.token: trio.lowlevel.TrioToken | None = None

    def show(self, state: BoardState) -> None:
        import trio

        from ..tournament import PLAYING
        from ..ui import BoardScreen, color_wanted, symbols_wanted

        if any(table.state == PLAYING for table in state.tables):
            return
        if self.board is None:
            self.token = trio.lowlevel.current_trio_token()
            self.board = BoardScreen(
                interactive=True,
                out=sys.stdout,
                you=self.you,
                symbols=symbols_wanted(sys.stdout),
                color=color_wanted(sys.stdout),
                quit=self.left,
            )
        self.board.update(state)

    def left(self) -> None:
        """q or Ctrl-C on the board (in the screen's thread): closed from the event's."""
        import trio

        token = self.token
        if token is not None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(self.close)

    def close(self) -> None:
        board, self.board = self.board, None
        if board is not None:
            board.close()


def _keep(folder: Path, leaderboard: Path | None) -> None:
    """At an event's end, every member: the report into its folder, and the event into its
    club leaderboard (rated once, however many members on one machine record it)."""
    from ..event import event_results, load, write_report
    from ..tournament import TournamentError, follow, ranked_games
    from ..ui import LeaderboardError, default_path, record_event

    try:
        _event, record = load(folder)
        state = follow(record)
    except (ValueError, TournamentError) as error:
        typer.echo(_("no report: {error}").format(error=error), err=True)
        return
    if state.entry is None or not state.finished():
        return
    try:
        paths = write_report(state, folder)
    except OSError as error:
        typer.echo(_("the report could not be written: {error}").format(error=error), err=True)
    else:
        typer.echo(_("the event's report: {paths}").format(paths=", ".join(map(str, paths))))
    entry = state.entry
    rounds, final = event_results(state)
    path = leaderboard or default_path(entry.spec.preset)
    try:
        done = record_event(
            path, entry.spec.preset, entry.event, entry.spec.name, entry.entrants,
            ranked_games(rounds, final),
        )  # fmt: skip
    except (LeaderboardError, OSError) as error:
        typer.echo(_("the club leaderboard is left as it was: {error}").format(error=error))
        return
    if done.kept_aside is not None:
        typer.echo(
            _("the leaderboard file was damaged: kept aside as {path}; a new one starts").format(
                path=done.kept_aside
            )
        )
    if done.rated:
        typer.echo(
            _("club leaderboard {path}: {games} games of this event rated").format(
                path=path, games=done.rated
            )
        )
    else:
        typer.echo(_("club leaderboard {path}: this event is on it already").format(path=path))


def _identity(path: Path | None, bot: str | None, name: str | None) -> Identity:
    from ..crypto.identity import IdentityError, default_identity_path, load_or_create
    from .net import bot_identity, bot_seat_name

    try:
        if path is None and bot is not None:
            return bot_identity(bot_seat_name(name, bot))
        return load_or_create(path or default_identity_path())
    except (IdentityError, OSError) as error:
        raise fail(f"identity: {error}") from None


def _default_folder(kind: str, name: str) -> Path:
    import time

    from ..dirs import data_dir

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir() / "events" / f"{stamp}-{kind}-{name}"


def _run(main: Any) -> int:
    import trio

    try:
        return int(trio.run(main))
    except BaseException as error:
        if not is_interrupt(error):
            raise
        typer.echo("interrupted")
        return EXIT_INTERRUPTED


def tournament(
    action: str = typer.Argument(
        ...,
        help="direct: open an event and run it; enter: play in one (HOST:PORT or the event's"
        " invite, or none: look on the LAN); report: write an event folder's report again;"
        " leaderboard: show the club's.",
    ),
    address: str | None = typer.Argument(
        None,
        help="enter: the director's HOST:PORT, or the event's invite (moska:...), as it printed"
        " it (without either, look for events on the LAN and enter the one found, or choose"
        " among several); report: the EVENT_FOLDER.",
    ),
    name: str | None = typer.Option(
        None, help="The event's name (direct), or your name in it (enter)."
    ),
    preset: str = typer.Option("moska", help=f"direct, leaderboard: one of {', '.join(PRESETS)}."),
    seats: int = typer.Option(4, min=2, max=6, help="direct: seats per table."),
    rounds: int = typer.Option(3, min=1, max=50, help="direct: rounds of tables."),
    games: int = typer.Option(1, min=1, max=50, help="direct: games each table plays a round."),
    final: int = typer.Option(
        0, min=0, max=6, help="direct: the best N play a final table (0: none)."
    ),
    final_games: int = typer.Option(
        0, min=0, max=50, help="direct: games of the final table (default: --games)."
    ),
    entrants: int = typer.Option(
        0, min=0, max=120, help="direct: the entry closes when this many have entered."
    ),
    bots_allowed: bool = typer.Option(
        True, "--bots-allowed/--no-bots", help="direct: whether bots may enter."
    ),
    bot: str | None = typer.Option(
        None, help="enter: a bot plays for you: a name, FILE.py:Class (default: you play)."
    ),
    program: str | None = typer.Option(
        None, help="enter: an external program plays for you (the bot API over stdio)."
    ),
    identity: Path | None = typer.Option(
        None, help="Your key file (default: yours; a --bot entrant has one per --name)."
    ),
    folder: Path | None = typer.Option(
        None,
        help="The event folder: every statement, your tables' transcripts, the standings"
        " (default: a new one in your data directory; name the old one to come back).",
    ),
    bind: str = typer.Option("0.0.0.0", help="Address to listen on (127.0.0.1: this machine)."),
    port: int = typer.Option(0, min=0, max=65535, help="direct: port to listen on (0: any)."),
    relay: str | None = typer.Option(
        None,
        help="direct: a relay (moska relay) where the entrants and the tables meet when they"
        " cannot reach each other: HOST:PORT; it goes into the event's invite.",
    ),
    relay_for_others: bool = typer.Option(
        False,
        "--relay-for-others",
        help="direct: also run a relay here (on --relay-port) for the entrants and their tables.",
    ),
    relay_port: int = typer.Option(
        0, min=0, max=65535, help="direct: port of --relay-for-others (0: any free port)."
    ),
    listen: bool = typer.Option(
        True,
        "--listen/--no-listen",
        help="Accept connections (--no-listen: the director and the tables are reached"
        " through the event's relay only).",
    ),
    wait: float = typer.Option(
        600.0, min=1.0, help="Seconds to wait for the director (enter) or a stage (direct)."
    ),
    announce: bool = typer.Option(
        True,
        "--announce/--no-announce",
        help="direct: announce the event on the LAN until its entry is full.",
    ),
    look: float = typer.Option(
        3.0, min=0.1, max=60.0, help="enter: seconds to look for events on the LAN (no HOST:PORT)."
    ),
    event: str | None = typer.Option(
        None, help="enter, no HOST:PORT: the event of this name (of several on the LAN)."
    ),
    expect: str | None = typer.Option(
        None,
        "--expect",
        help="enter, no HOST:PORT: the director's fingerprint (all 32 hex digits, as it prints"
        " it) or its full key: enter no other director's event.",
    ),
    plain: bool = typer.Option(
        False, "--plain", help="enter: lines instead of the full-screen table (no --bot)."
    ),
    out: Path | None = typer.Option(
        None, help="report: where the report's files go (default: the event folder)."
    ),
    export: bool = typer.Option(
        False, "--export", help="report: also every game of the folder as a text record."
    ),
    file: Path | None = typer.Option(
        None,
        help="The club's leaderboard file the event is rated into, and leaderboard shows"
        " (default: the data directory's, one a preset).",
    ),
    take_from: Path | None = typer.Option(
        None,
        "--from",
        help="direct: your event folder is lost, your key is not: continue the event from a"
        " member's folder (its statements are checked and copied into --folder).",
    ),
    succeed: bool = typer.Option(
        False,
        "--succeed",
        help="direct --from YOUR_FOLDER: the director's key is lost: direct the event in its"
        " place with your own key, once more than half of the entrants acknowledge it.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per move."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log connections."),
) -> None:
    """Run a club event of several tables and rounds with no referee: `direct` opens it
    (`--relay HOST:PORT`: it meets at a relay too, and prints the event's invite), `enter
    HOST:PORT` (or `enter INVITE`) plays in it; the draw is drawn from every entrant's
    secret, the tables play on the entrants' own machines, and `moska verify FOLDER` proves
    the standings. At the end every member writes the report into its folder and rates the
    event on its club leaderboard; `report FOLDER` writes it again, `leaderboard` shows the
    ratings."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if action == "direct":
        raise typer.Exit(
            _direct(
                name,
                preset,
                seats,
                rounds,
                games,
                final,
                final_games,
                entrants,
                bots_allowed,
                identity,
                folder,
                bind,
                port,
                wait,
                file,
                take_from,
                succeed,
                (relay, relay_port if relay_for_others else None, listen),
                announce,
            )
        )
    if action == "enter":
        choice = EventChoice(look, expect, event)
        entered = _enter(
            address, name, bot, program, identity, folder, bind, wait, quiet, plain, file, listen,
            choice,
        )  # fmt: skip
        raise typer.Exit(entered)
    if action == "report":
        if address is None:
            raise fail(_("report: name the EVENT_FOLDER"))
        raise typer.Exit(report_event(Path(address), out, export))
    if action == "leaderboard":
        raise typer.Exit(show_leaderboard(preset, file))
    raise fail(f"unknown action {action!r}: direct, enter, report or leaderboard")


def _direct(
    name: str | None,
    preset: str,
    seats: int,
    rounds: int,
    games: int,
    final: int,
    final_games: int,
    entrants: int,
    bots_allowed: bool,
    identity: Path | None,
    folder: Path | None,
    bind: str,
    port: int,
    wait: float,
    leaderboard: Path | None = None,
    take_from: Path | None = None,
    succeed: bool = False,
    meeting: tuple[str | None, int | None, bool] = (None, None, True),
    announce: bool = False,
) -> int:
    """``meeting``: the event's relay (``HOST:PORT``), the port of the relay the director
    runs for the others (None: none), and whether the director listens."""
    from ..event.carrier import DirectorNode, DirectorOptions
    from ..event.folder import is_event_folder, load
    from ..tournament import EventSpec, TournamentError

    if entrants < 2 and take_from is None:
        raise fail("direct: say how many entrants the entry closes with (--entrants N)")
    relay_address, relay_for_others, listen = _meeting(*meeting)
    try:
        spec = EventSpec(
            name or "club evening",
            preset,
            seats,
            rounds,
            games,
            final,
            (final_games or games) if final else 0,
            bots_allowed,
        )
    except TournamentError as error:
        raise fail(str(error)) from None
    me = _identity(identity, None, None)
    where = folder or _default_folder("direct", "event")
    nonce = secrets.token_bytes(32)
    if succeed and take_from is None:
        raise fail("--succeed: name the folder the event continues from (--from FOLDER)")
    if take_from is not None:  # the director's folder is lost: a member's continues it
        from ..event import FolderError, take_over

        try:
            take_over(take_from, where, me.public_bytes, succeed=succeed)
        except (FolderError, TournamentError) as error:
            raise fail(f"--from: {error}") from None
        typer.echo(f"the event of {take_from} continues from {where}")
    if is_event_folder(where):  # the director comes back: the event of its folder
        from ..tournament.record import follow

        _event, record = load(where)
        entry = follow(record).entry
        if entry is None:
            raise fail(f"{where} holds an event whose entry never closed: start a new one")
        spec, nonce, entrants = entry.spec, entry.nonce, len(entry.entrants)
        typer.echo(f"resuming the event of {where}")
    where.mkdir(parents=True, exist_ok=True)
    if announce:
        from .net import discovery_settings

        discovery_settings()  # a bad MOSKA_DISCOVERY is an error before anything starts
    options = DirectorOptions(
        me, spec, nonce, entrants, where, bind, port, show=_print_board, stage_timeout=wait,
        relay=relay_address, relay_for_others=relay_for_others, listen=listen,
        announce=announce,
    )  # fmt: skip
    code = _run(DirectorNode(options).run)
    if code == 0:
        _keep(where, leaderboard)
    typer.echo(f"the event folder: {where} (moska verify {where})")
    return code


def _meeting(
    relay: str | None, relay_for_others: int | None, listen: bool
) -> tuple[tuple[str, int] | None, int | None, bool]:
    """The director's ``--relay``, ``--relay-for-others`` and ``--no-listen``, checked as
    ``moska host`` checks them."""
    from .relay import parse_relay

    relay_address = parse_relay(relay) if relay is not None else None
    if relay_address is not None and relay_for_others is not None:
        raise fail("--relay names another relay; --relay-for-others runs one here: pick one")
    if not listen and relay_address is None and relay_for_others is None:
        raise fail("--no-listen needs --relay: the entrants must reach the director somehow")
    return relay_address, relay_for_others, listen


def _event_invite(text: str, listen: bool) -> Invite:
    """The event's invite ``moska tournament enter`` was given (a table's is refused, with
    the command that takes it)."""
    from ..net.invite import EVENT_INVITE, InviteError, parse_invite
    from .net import check_invite_length

    check_invite_length(text)
    try:
        invite = parse_invite(text, EVENT_INVITE)
    except InviteError as error:
        raise fail(f"not a usable invite: {error}") from None
    if not listen and invite.relay is None:
        raise fail("--no-listen needs an event invite with a relay (the tables meet there)")
    return invite


def _enter(
    address: str | None,
    name: str | None,
    bot: str | None,
    program: str | None,
    identity: Path | None,
    folder: Path | None,
    bind: str,
    wait: float,
    quiet: bool,
    plain: bool = False,
    leaderboard: Path | None = None,
    listen: bool = True,
    choice: EventChoice | None = None,
) -> int:
    from ..bots.loader import BotLoadError, load_bot
    from ..event.carrier import EntrantNode, EntrantOptions
    from ..event.tables import Seat
    from ..net.invite import looks_like_invite
    from ..net.node import Player
    from ..table.networked import BotAtTable, PersonAtTable
    from ..tournament import BOT, PERSON

    if bot is not None and program is not None:
        raise fail("--bot or --program, not both")
    spec = f"exec:{program}" if program is not None else bot
    if spec is not None:
        check_bots([spec])
        try:
            load_bot(spec)  # refused here, before anything is opened
        except (BotLoadError, ValueError) as error:
            raise fail(str(error)) from None
    found: FoundEvent | None = None
    if address is None and folder is not None and (rejoin := _entered_event(folder)):
        found = find_own_event(folder, *rejoin, wait)  # back after a crash: its event
        address = found.endpoint
    elif address is None:  # an event found on the LAN, its director's key pinned
        found = find_event(choice or EventChoice(), automatic=spec is not None)
        address = found.endpoint
    elif choice is not None and (choice.expect is not None or choice.event is not None):
        raise fail("--event and --expect choose among the events on the LAN: no HOST:PORT")
    invite = _event_invite(address, listen) if looks_like_invite(address) else None
    host, sep, port_text = address.strip().rpartition(":")
    host = host.strip("[]")
    if invite is not None:
        host, port_text = "", "0"
    elif not listen:
        raise fail("--no-listen needs the event's invite with a relay (moska:...)")
    elif not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise fail(f'"{address}" is not the director\'s HOST:PORT (e.g. 192.168.1.20:7000)')
    port = int(port_text)
    me = _identity(identity, spec, name)
    seat_name = name or (Path(bot.split(":")[0]).stem if bot else "program" if program else "")
    if not seat_name:  # a person: the login name, as at a table
        import getpass

        try:
            seat_name = getpass.getuser() or "player"
        except Exception:  # no login name (a container without a user entry)
            seat_name = "player"

    def player() -> Player:
        if spec is None:
            from ..ui.terminal import TerminalPlayer

            return PersonAtTable(TerminalPlayer([], auto_pass=0.8, pace=0.0, plain=plain))
        return BotAtTable(load_bot(spec), echo=None if quiet else print)

    where = folder or _default_folder("enter", seat_name)
    where.mkdir(parents=True, exist_ok=True)
    if found is not None:
        typer.echo(
            f"entering the event at {address} (after a crash the same command with"
            f" --folder {where} finds it again, wherever its director listens then)"
        )
    seat = Seat(
        me, seat_name, player, bind, echo=(lambda _: None) if quiet else print, listen=listen
    )
    options = EntrantOptions(
        seat,
        PERSON if spec is None else BOT,
        where,
        host,
        port,
        show=lambda board: _print_board(board, me.public_bytes, live=spec is not None),
        connect_wait=wait,
        invite=invite,
    )
    if found is not None:
        from ..event import Pin

        options.pin = Pin.of(found)
    person: PersonBoard | None = None
    if spec is None and not plain and sys.stdin.isatty() and sys.stdout.isatty():
        person = PersonBoard(me.public_bytes)
        options.show, options.before_table = person.show, person.close
    try:
        code = _run(EntrantNode(options).run)
    finally:
        if person is not None:
            person.close()
    if code == 0:
        _keep(where, leaderboard)
    typer.echo(f"the event folder: {where} (moska verify {where})")
    return code if code in (0, EXIT_INTERRUPTED) else EXIT_FAILED


@dataclass(frozen=True)
class EventChoice:
    """How ``enter`` with no address picks an event on the LAN: how long to look, and the
    director's key (``--expect``) or the event's name (``--event``) when several are open."""

    look: float = 3.0
    expect: str | None = None
    event: str | None = None


def _entered_event(folder: Path) -> tuple[bytes, set[bytes]] | None:
    """(the event's id, the keys that may direct it) of the event ``folder`` holds once its
    entry closed: what an entrant started again with no address looks for on the LAN."""
    from ..event.folder import FolderError, is_event_folder, load
    from ..tournament import TournamentError
    from ..tournament.record import follow

    if not is_event_folder(folder):
        return None
    try:
        event, record = load(folder)
        state = follow(record)
    except (FolderError, TournamentError) as error:
        raise fail(f"{folder}: {error}") from None
    if state.entry is None:
        return None
    keys = {state.entry.director}
    if state.successor is not None:
        keys.add(state.successor)
    return event, keys


def find_own_event(folder: Path, event: bytes, keys: set[bytes], wait: float) -> FoundEvent:
    """Where the event of ``folder`` runs now, by its director's (or successor's) beacon:
    an entrant that crashed comes back with the same command, address or none."""
    import trio

    from ..event import find_running_event
    from ..net.discovery import DiscoveryError
    from .net import discovery_settings

    typer.echo(f"{folder} holds an event: looking for it on the LAN for up to {wait:g} s...")
    try:
        found = trio.run(find_running_event, wait, event, keys, discovery_settings())
    except DiscoveryError as error:
        raise fail(f"{error}; come back with the director's address: moska tournament"
                   f" enter HOST:PORT --folder {folder}", EXIT_FAILED) from None  # fmt: skip
    except KeyboardInterrupt:
        typer.echo("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if found is None:
        raise fail(
            f"the event of {folder} was not heard on the LAN in {wait:g} s (its director"
            f" stopped, or is not on this LAN): come back with its address, moska tournament"
            f" enter HOST:PORT --folder {folder}",
            EXIT_FAILED,
        )
    typer.echo(f"found it at {found.endpoint}, directed by {found.fingerprint}")
    return found


def find_event(choice: EventChoice, *, automatic: bool) -> FoundEvent:
    """The event ``enter`` with no address enters: the only one found (a bot's, or one named
    by ``--event``/``--expect``, is taken; a person says yes on a terminal), or the one a
    person picks from a numbered list; exit 2 when there is none, or several and nobody to
    choose (``automatic``: a bot or a program enters)."""
    import trio

    from ..event import find_events
    from ..net.discovery import DiscoveryError, pick_table
    from .net import discovery_settings, join_the_only_table, key_matches, parse_expect

    pinned = parse_expect(choice.expect)
    settings = discovery_settings()
    typer.echo(f"looking for events on the LAN for {choice.look:g} s...")
    try:
        found = trio.run(find_events, choice.look, settings).events
    except DiscoveryError as error:
        raise fail(
            f"{error}; an event can always be entered with: moska tournament enter HOST:PORT",
            EXIT_FAILED,
        ) from None
    except KeyboardInterrupt:
        typer.echo("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    named = choice.event.casefold() if choice.event is not None else None
    wanted = [
        e for e in found
        if key_matches(e.key, pinned) and (named is None or e.name.casefold() == named)
    ]  # fmt: skip
    if len(wanted) < len(found):
        typer.echo(f"skipping {len(found) - len(wanted)} event(s) that --event/--expect leave out")
    if not wanted:
        raise fail(
            f"no open event found on the LAN in {choice.look:g} s; pass the director's"
            " HOST:PORT (it prints it), e.g. moska tournament enter 192.168.1.20:41234"
        )
    chosen = automatic or pinned is not None or named is not None
    if len(wanted) == 1:
        typer.echo(f"found one event: {wanted[0].describe()}")
        if not join_the_only_table(chosen, sys.stdin.isatty(), input, "enter it?"):
            raise fail(
                "not entered: an event found on the LAN may be a stranger's; enter it by its"
                " address (moska tournament enter HOST:PORT, as its director printed it), or"
                " name it with --event NAME or --expect FINGERPRINT, or answer y when asked"
                " on a terminal"
            )
        return wanted[0]
    typer.echo(f"found {len(wanted)} events:")
    for number, each in enumerate(wanted, 1):
        typer.echo(f"  {number}. {each.describe()}")
    if automatic or not sys.stdin.isatty():
        raise fail(
            "several events are open on the LAN: choose one with --event NAME or --expect"
            " FINGERPRINT (its director's, as listed), or give its HOST:PORT"
        )
    picked = pick_table(wanted, input, "enter which event?")
    if picked is None:
        raise fail("no event chosen; pass its director's HOST:PORT to enter it directly")
    return picked


def verify_events(folders: list[Path], as_json: bool) -> int:
    """``moska verify EVENT_FOLDER``: each event recomputed (:func:`~..event.folder.verify_event`);
    the exit code of the worst: 1 INVALID, 3 incomplete, 4 not an event's folder, else 0."""
    import json

    from ..event import NOT_AN_EVENT, VALID, board_state, verify_event
    from ..protocol.transcript import INCOMPLETE, INVALID
    from ..tournament import digest
    from .common import EXIT_INCOMPLETE, EXIT_NOT_A_TRANSCRIPT

    codes = {VALID: 0, INVALID: EXIT_FAILED, INCOMPLETE: EXIT_INCOMPLETE}
    worst = 0
    for folder in folders:
        report = verify_event(folder)
        rows = report.rows or []
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "event_folder": str(folder),
                        "status": report.status,
                        "fault": report.fault,
                        "standings_digest": digest(rows).hex() if rows else None,
                        "standings": [[r.name, r.points, r.final_points] for r in rows],
                    }
                )
            )
        elif report.status == VALID:
            typer.echo(f"valid: event {folder}: every round's draw, tables and standings recompute")
            for line in report.lines:
                typer.echo(f"  {line}")
            board = board_state(report.state) if report.state is not None else None
            if board is not None:
                _print_board(board)
        elif report.status == INCOMPLETE:
            typer.echo(f"incomplete: event {folder}: {report.fault}", err=True)
        elif report.status == NOT_AN_EVENT:
            typer.echo(f"{folder}: {report.fault}", err=True)
        else:
            typer.echo(f"INVALID: event {folder}: {report.fault}", err=True)
        code = EXIT_NOT_A_TRANSCRIPT if report.status == NOT_AN_EVENT else codes[report.status]
        worst = max(worst, code, key=lambda c: (c == EXIT_FAILED, c))
    return worst


def report_event(folder: Path, out: Path | None, export: bool) -> int:
    """``moska tournament report EVENT_FOLDER``: the report's files written again from a
    folder that verifies (an event stopped early: the rounds it published), and with
    ``export`` every game the folder holds as a text record."""
    from ..event import NOT_AN_EVENT, game_transcripts, verify_event, write_report
    from ..protocol.transcript import INCOMPLETE, INVALID
    from ..ui import export_games

    found = verify_event(folder)
    if found.status in (INVALID, NOT_AN_EVENT) or found.state is None:
        typer.echo(
            _("{folder} does not verify ({fault}): no report is drawn from it").format(
                folder=folder, fault=found.fault
            ),
            err=True,
        )
        return EXIT_FAILED
    if found.status == INCOMPLETE:
        typer.echo(
            _("the event is incomplete ({fault}): the report has what it published").format(
                fault=found.fault
            )
        )
    target = out or folder
    try:
        target.mkdir(parents=True, exist_ok=True)
        paths = write_report(found.state, target)
    except OSError as error:
        raise fail(_("the report could not be written: {error}").format(error=error)) from None
    for path in paths:
        typer.echo(_("written: {path}").format(path=path))
    if not export:
        return 0
    games = target / "games"
    try:
        exported = export_games(game_transcripts(folder), games)
    except OSError as error:
        raise fail(f"{games}: {error.strerror or error}") from None
    failed = 0
    for item in exported:
        if item.record is None:
            failed += 1
            said = _("not exported: {path}: {error}")
            typer.echo(said.format(path=item.source, error=item.error), err=True)
    typer.echo(
        _("{count} games exported to {folder}").format(count=len(exported) - failed, folder=games)
    )
    return EXIT_FAILED if failed else 0


def show_leaderboard(preset: str, file: Path | None) -> int:
    """``moska tournament leaderboard``: the club's ratings, best first by ordinal."""
    from ..ui import LeaderboardError, default_path, load

    path = file or default_path(preset)
    if not path.exists():
        typer.echo(_("no leaderboard yet at {path}: an event's end makes it").format(path=path))
        return 0
    try:
        board = load(path, None if file is not None else preset)
    except LeaderboardError as error:
        typer.echo(str(error), err=True)
        if error.damaged:
            typer.echo(_("the next event's end keeps it aside and starts a new one"), err=True)
        return EXIT_FAILED
    typer.echo(
        _("club leaderboard of {preset}: {events} events, {games} games ({path})").format(
            preset=board.preset, events=len(board.events), games=board.games, path=path
        )
    )
    header = (_("#"), _("name"), _("plays"), _("events"), _("games"), _("rating"), "mu", "sigma")
    lines = [header]
    for rank, _key, member in board.standings():
        lines.append(
            (
                str(rank),
                member.name,
                member.plays,
                str(member.events),
                str(member.rating.games),
                f"{member.ordinal:.1f}",
                f"{member.rating.mu:.1f}",
                f"{member.rating.sigma:.2f}",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        cells = [
            c.ljust(w) if i == 1 else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        typer.echo("  ".join(cells).rstrip())
    return 0

"""The network commands: ``host`` opens a table, ``join`` sits down at one, ``tables`` lists
the open tables on the LAN (:mod:`moska_p2p.net.discovery`).

trio, the crypto, the network layer and the terminal UI are imported when a command runs, so
that ``moska --help`` (and every other command) never imports them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from glob import escape as glob_escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..engine import PRESETS
from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    check_bots,
    check_file,
    fail,
    parse_options_strict_or_exit,
)

if TYPE_CHECKING:
    from ..bots.api import Bot
    from ..crypto.identity import Identity
    from ..net.discovery import Found, FoundTable, Settings
    from ..net.invite import Invite
    from ..net.node import Node, NodeOptions, Outcome
    from ..net.persist import SavedGame
    from ..ui.terminal import TerminalPlayer

BOT_TIMEOUT, PERSON_TIMEOUT = 30.0, 300.0
"""The table's default timeout (seconds a peer may take to answer): bots, or a person."""


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")  # [::1]:7000
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise fail(f'"{text}" is not HOST:PORT (e.g. 192.168.1.20:7000)')
    return host, int(port)


def _user_name() -> str:
    """The person's default name at a table: the login name."""
    import getpass

    try:
        return getpass.getuser() or "player"
    except Exception:  # no login name (a container without a user entry)
        return "player"


def _person(auto_pass: float, plain: bool = False) -> TerminalPlayer:
    """The person at the terminal, for a network seat (the node tells it the names);
    ``plain``: lines even on a terminal (a screen reader, a terminal the full screen does not
    suit, a script on a pty), as ``moska play --plain``."""
    from ..ui.terminal import TerminalPlayer

    return TerminalPlayer([], auto_pass=auto_pass, pace=0.0, plain=plain)


def _prepare(
    bot: str | None,
    name: str | None,
    identity: Path | None,
    seed: int | None,
    verbose: bool,
    auto_pass: float = 0.8,
    transcript: Path | None = None,
    plain: bool = False,
) -> tuple[Identity, Bot]:
    """The identity and the seat's player: the bot named, or the person at the terminal.

    A person plays with the account's key (or ``--identity``); a bot seat with no
    ``--identity`` plays with a key of its own (:func:`bot_identity`), so several seats of one
    account can sit at one table and each comes back to its seat after a crash.
    Everything that can be refused is refused here, before any socket is opened."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    from ..bots.loader import BotLoadError, load_bot
    from ..crypto.identity import IdentityError

    if bot is not None:
        check_bots([bot])
    if transcript is not None:
        check_file(transcript, "--transcript", make_parents=True)
    try:
        if bot is not None and identity is None:
            ident = bot_identity(bot_seat_name(name, bot))
        else:
            ident = _account_identity(identity)
    except (IdentityError, OSError) as error:
        raise fail(f"identity: {error}") from None
    if bot is None:
        return ident, _person(auto_pass, plain)
    try:
        made = load_bot(bot, seed=seed)
    except (BotLoadError, ValueError) as error:
        raise fail(str(error)) from None
    return ident, made


BOT_SEATS_PER_NAME = 32
"""Bot seats of one name that may run at once from one data folder (``greedy``,
``greedy-2``, ...): each holds a key of its own."""

_claimed: list[int] = []
"""The lock files of the bot keys this process holds, open until it exits (the kernel
lets go of them when it does, a kill included)."""

_made_keys: list[Path] = []
"""Bot keys this process made: taken back if no game was played with them."""
_made_folders: list[Path] = []
"""The folders made for them, deepest first (taken back with them when left empty)."""


def bot_seat_name(name: str | None, bot: str) -> str:
    """A bot seat's name at the table: ``--name``, else the bot's kind (``greedy``, the
    file's stem of ``bots/mine.py:Bot``)."""
    return name or Path(bot.split(":")[0]).stem or "player"


def bot_key_folder() -> Path:
    """Where bot seats keep their keys: beside the games folder, in the data directory
    (``~/.local/share/moska-p2p/bots/``), so the same data folder means the same keys."""
    from ..net.persist import data_dir

    return data_dir().parent / "bots"


def bot_identity(seat: str) -> Identity:
    """The key of a bot seat named ``seat`` with no ``--identity``: the first of
    ``NAME.pem``, ``NAME-2.pem``, ... that no running seat holds, made on first use.

    A seat is the key the others know it by: a bot that ran with a key of the moment could
    not come back after a crash (the host refuses a new key once the game has started).
    Several seats of one name (two ``--bot greedy`` of one account at one table) each claim
    a key of their own by a lock held for the life of the process; a killed seat's lock
    goes with it, so the same command run again finds the key free and its saved game."""
    from ..crypto.identity import IdentityError, check_key_directory, load_or_create

    folder = bot_key_folder()
    _made_folders[:] = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_key_directory(folder)
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in seat).lstrip(".") or "bot"
    for number in range(1, BOT_SEATS_PER_NAME + 1):
        path = folder / (f"{stem}.pem" if number == 1 else f"{stem}-{number}.pem")
        if not _claim(path.with_suffix(".lock")):
            continue
        made = not path.exists()
        ident = load_or_create(path)
        if made:
            _made_keys.append(path)
            typer.echo(
                f"made a key for the bot seat {seat!r}: {path} ({ident.fingerprint}); the same"
                " command finds it again, and with it this seat's saved game"
            )
        return ident
    raise IdentityError(
        f"{BOT_SEATS_PER_NAME} bot seats named {seat!r} run already from {folder}; give this"
        " one another --name, or its own key with --identity FILE"
    )


def _claim(lock: Path) -> bool:
    """Hold ``lock`` for the rest of this process; False if a running process holds it."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one seat of a name at a time
        return True
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _claimed.append(fd)
    return True


def _account_identity(path: Path | None) -> Identity:
    """The person's key (or ``--identity``'s), made on first use, and then said where:
    it is who the player is at every table from now on."""
    from ..crypto.identity import default_identity_path, load_or_create

    target = path or default_identity_path()
    made = not target.exists()
    ident = load_or_create(target)
    if made:
        typer.echo(
            f"made your key: {target} ({ident.fingerprint}); the others know you by it,"
            " keep it (moska keygen shows it)"
        )
    return ident


def _saved_game(transcript: Path | None, ident: Identity, resume: bool) -> SavedGame | None:
    """The saved game a re-run of the command should resume, if any (see net/persist.py)."""
    from ..net.persist import SaveError, find_saved, load_saved

    path = find_saved(transcript, ident.public_bytes)
    if path is None:
        if resume:
            raise fail("there is no saved game to resume")
        return None
    try:
        saved = load_saved(path)
    except SaveError as error:
        if resume:
            raise fail(f"cannot resume: {error}") from None
        typer.echo(f"ignoring an unreadable saved game: {error}")
        return None
    if saved.roster[saved.me].key != ident.public_bytes:
        raise fail(
            f"the saved game {path} was played with another key: resume it with that key"
            " (--identity FILE), or name another --transcript"
        )
    if resume or saved.fresh():
        return saved
    saved.discard()  # no seat to come back to: nothing left to resume (its secret stays)
    typer.echo(
        f"the saved game of {saved.transcript} is older than its grace and its timeout (the"
        " others have given up): starting a new game (that game's transcript stays, for moska"
        " verify and moska replay)"
    )
    return None


def _of_the_table(
    saved: SavedGame, target: tuple[str, int] | None, invite: Invite | None
) -> bool:
    """Whether ``moska join`` names the table of its saved game (a seat comes back by the
    same command): the invite's host is at that table, or the address's port is the one the
    seat had joined; with no table named, the saved game's own host is the one."""
    if invite is not None:
        return any(entry.key == invite.host_key for entry in saved.roster)
    if target is not None and saved.host_address is not None:
        return target[1] == saved.host_address[1]
    return True


def _seat_files(
    transcript: Path | None,
    name: str | None,
    bot: str | None,
    ident: Identity,
    saved: SavedGame | None,
) -> tuple[Path, str]:
    """The transcript path and the player's name (a bot's kind, or the person's login
    name): a resumed game keeps its own."""
    from ..net.persist import default_transcript

    if saved is not None:
        return saved.transcript, saved.name
    path = transcript or default_transcript(ident.public_bytes)
    if name:
        return path, name
    if bot is None:
        return path, _user_name()
    return path, bot_seat_name(None, bot)


def _node_options(
    ident: Identity,
    made: Bot,
    transcript: Path | None,
    name: str | None,
    bot: str | None,
    saved: SavedGame | None,
    bind: str,
    wait: float,
    quiet: bool,
    pace: float,
    stats: Path | None,
    **specific: Any,
) -> NodeOptions:
    """The node settings ``host`` and ``join`` share, plus the ones given by keyword."""
    from ..net.known import default_known_peers_path
    from ..net.node import NodeOptions, Player
    from ..table.networked import BotAtTable, PersonAtTable
    from ..ui.terminal import TerminalPlayer
    from .results import results_table

    path, seat_name = _seat_files(transcript, name, bot, ident, saved)
    player: Player
    fresh: Callable[[], Player] | None = None
    if isinstance(made, TerminalPlayer):
        player = PersonAtTable(made)  # the table on the screen shows the moves
        fresh = partial(PersonAtTable, made)  # each game of a session: a table of its own
    else:
        player = BotAtTable(made, pace=pace, echo=None if quiet else echo_line)
    return NodeOptions(
        identity=ident,
        player=player,
        transcript=path,
        error=_error_line,
        echo=table_line,
        name=seat_name,
        bind=bind,
        lobby_wait=wait,
        handle_signals=True,
        stats=stats,
        known_peers=default_known_peers_path(),
        results=results_table,  # a session's table (M24), with the arena's Wilson intervals
        fresh_player=fresh,
        **specific,
    )


_FLAG_HINTS = (
    (
        "the game has started",
        "a seat of that game comes back only with the key it played with: run the very"
        " command it ran (--identity FILE, if it named one; a --bot seat without one finds"
        " its own again by its --name)",
    ),
)
"""Refusals a flag can fix, and the words that name it (the node's reasons say what
happened; only the command line knows its flags)."""


INVITE_LINE = "invite (moska join INVITE): "
"""How the node prints a table's invite (one line, for a script or a pipe to read)."""


def table_line(text: str) -> None:
    """A line of the node's, as it happens; on a terminal narrower than the invite's line,
    the invite as a command to paste whole, in lines ending in ``\\`` (a shell joins
    them; ``join`` takes the pieces), not one line the terminal breaks where a paste then
    cuts the invite."""
    if text.startswith(INVITE_LINE) and sys.stdout.isatty():
        width = shutil.get_terminal_size().columns
        if len(text) > width:
            text = invite_lines(text.removeprefix(INVITE_LINE), width)
    print(text, flush=True)


def invite_lines(invite: str, width: int) -> str:
    """``moska join INVITE`` in lines of at most ``width`` columns, each but the last
    ending in `` \\``: pasted into a shell, one command."""
    room = max(20, width - 8)
    first = max(10, room - len("  moska join "))
    pieces = [invite[:first]] + [invite[i : i + room] for i in range(first, len(invite), room)]
    lines = [f"  moska join {pieces[0]}", *(f"    {piece}" for piece in pieces[1:])]
    return "invite (paste these lines whole: one command):\n" + " \\\n".join(lines)


def check_invite_length(text: str) -> None:
    """Refuse an invite shorter than any (exit 2) with what happened: a paste cut at a line
    break, the rest run as a command of its own."""
    from ..net.invite import PREFIX, Invite
    from ..net.relay_proto import ROOM_SIZE

    shortest = len(str(Invite(bytes(32), bytes(ROOM_SIZE), (("h", 1),)))) - len(PREFIX)
    code = "".join(text.split())[len(PREFIX) :]
    if 0 < len(code) < shortest:
        raise fail(
            f"the invite is {len(code)} characters after 'moska:', shorter than any invite"
            f" ({shortest} at least): it was cut, most likely at a line break when copied;"
            " paste all of it (its pieces may be separated by spaces or line breaks ending"
            " in \\)"
        )


def _error_line(text: str) -> None:
    """A failure before the game (could not listen, could not join): ``error: ...``, with
    the flag that fixes it where one does."""
    hints = [hint for words, hint in _FLAG_HINTS if words in text and hint not in text]
    typer.echo(f"error: {'; '.join([text, *hints])}", err=True)


def echo_line(text: str) -> None:
    """One line of the game's log, as soon as it happens."""
    print(text, flush=True)


def discovery_settings() -> Settings:
    from ..net.discovery import DiscoveryError, Settings

    try:
        return Settings.from_env()
    except DiscoveryError as error:
        raise fail(str(error)) from None


def _look(wait: float) -> Found:
    """Listen for table announcements for ``wait`` seconds (exit 1 if this machine cannot)."""
    import trio

    from ..net.discovery import DiscoveryError, find_tables

    settings = discovery_settings()
    try:
        return trio.run(find_tables, wait, settings)
    except DiscoveryError as error:
        raise fail(
            f"{error}; a table can always be joined with: moska join HOST:PORT", EXIT_FAILED
        ) from None
    except KeyboardInterrupt:
        typer.echo("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _list_tables(found: list[FoundTable]) -> None:
    for number, table in enumerate(found, 1):
        typer.echo(f"  {number}. {table.describe()}")


def parse_expect(text: str | None) -> bytes | str | None:
    """``--expect``: a full public key (64 hex digits) or a full fingerprint (32)."""
    from ..crypto.identity import parse_fingerprint

    if text is None:
        return None
    digits = text.strip().replace(" ", "").replace(":", "").replace("-", "")
    if len(digits) == 64:
        try:
            return bytes.fromhex(digits)
        except ValueError:
            pass
    try:
        return parse_fingerprint(text)
    except ValueError as error:
        raise fail(f"--expect: {error}") from None


def key_matches(key: bytes, expect: bytes | str | None) -> bool:
    from ..crypto.identity import fingerprint_of

    if expect is None:
        return True
    return key == expect if isinstance(expect, bytes) else fingerprint_of(key) == expect


def _choose_table(wait: float, expect: bytes | str | None = None) -> FoundTable:
    """The table ``moska join`` with no address sits down at: the only one found, once the
    player says so (:func:`join_the_only_table`), or the one the player picks from a
    numbered list; exit 2 when there is none. With ``expect`` only the tables of that host
    key are considered (and the one found is joined without a question)."""
    from ..net.discovery import pick_table

    typer.echo(f"looking for tables on the LAN for {wait:g} s...")
    everything = _look(wait).tables
    found = [t for t in everything if t.joinable]
    if len(found) < len(everything):
        typer.echo(f"skipping {len(everything) - len(found)} table(s) of another protocol version")
    if expect is not None:
        others = [t for t in found if not key_matches(t.key, expect)]
        if others:
            typer.echo(f"skipping {len(others)} table(s) of another host than --expect says")
        found = [t for t in found if key_matches(t.key, expect)]
    if not found:
        raise fail(
            f"no open table found on the LAN in {wait:g} s; pass the table's HOST:PORT"
            " (its host prints it), e.g. moska join 192.168.1.20:7777"
        )
    if len(found) == 1:
        typer.echo(f"found one table: {found[0].describe()}")
        if not join_the_only_table(expect is not None, sys.stdin.isatty(), input):
            raise fail(
                "not joined: a table found on the LAN may be a stranger's; join it by its"
                " address (moska join HOST:PORT, as its host printed it), or pin its host"
                " with --expect FINGERPRINT, or answer y when asked on a terminal"
            )
        return found[0]
    typer.echo(f"found {len(found)} tables:")
    _list_tables(found)
    chosen = pick_table(found, input)
    if chosen is None:
        raise fail("no table chosen; pass its HOST:PORT to join it directly")
    return chosen


def join_the_only_table(
    pinned: bool, interactive: bool, ask: Callable[[str], str], question: str = "join it?"
) -> bool:
    """Whether ``moska join`` with no address sits down at the one table it found (or
    ``tournament enter`` enters the one event: ``question``): on a shared LAN that may be a
    stranger's, so only when ``--expect`` pinned its host, or the person says yes to the
    table shown (on a terminal; a script names the table)."""
    if pinned:
        return True
    if not interactive:
        return False
    try:
        answer = ask(f"{question} [y/N] ")
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes", "k", "kyllä")


def _close_bot(made: Bot) -> None:
    close = getattr(made, "close", None)
    if callable(close):
        close()


def _forget_unused_keys(transcript: Path) -> None:
    """Take back the bot keys this run made when it wrote no transcript (it never sat at a
    game: a port in use, a refusal): a command that failed leaves nothing behind, and a key
    nobody has seen is no seat to come back to."""
    if transcript.exists() or any(transcript.parent.glob(f"{glob_escape(transcript.stem)}-g*")):
        return
    for key in _made_keys:
        key.unlink(missing_ok=True)
        key.with_suffix(".lock").unlink(missing_ok=True)
    if _made_keys:
        for folder in _made_folders:
            with contextlib.suppress(OSError):  # not empty: something else lives there now
                folder.rmdir()
    _made_keys.clear()


def _run(
    node: Node,
    made: Bot,
    saved: SavedGame | None,
    start: Callable[[Node], Awaitable[Outcome]],
    transcript: Path,
) -> int:
    """Run one peer to its end; the exit code (:mod:`.common`'s: 0 the game played to its
    end, 1 a failure or a game stopped by a verdict, 130 interrupted or left). The node
    cannot import the command line, so it has its own copies of these numbers; a test keeps
    them equal."""
    import trio

    from .common import EXIT_INTERRUPTED, is_interrupt

    async def main() -> Outcome:
        if saved is not None:
            return await node.resume(saved)
        return await start(node)

    try:
        outcome = trio.run(main)
    except BaseException as error:  # a Ctrl-C before the node listens for it, maybe grouped
        if not is_interrupt(error):
            raise
        typer.echo("interrupted")
        return EXIT_INTERRUPTED
    finally:
        _close_bot(made)
        _forget_unused_keys(transcript)
    return outcome.code


def host(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    players: int = typer.Option(4, min=2, max=6, help="Number of seats, 2 to 6."),
    games: int = typer.Option(
        1,
        min=1,
        max=100,
        help="Games the table plays together, a session (RULES M24): the loser deals the next;"
        " each game has its own transcript (NAME-gN.moska beside --transcript) and the signed"
        " results go to NAME-session.moska. Between games a person is asked to go on.",
    ),
    port: int = typer.Option(0, min=0, max=65535, help="Port to listen on (0: any free port)."),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Change a preset option, NAME=VALUE (repeatable)."
    ),
    name: str | None = typer.Option(
        None, help="Your name at the table (default: your login name, or the bot's)."
    ),
    identity: Path | None = typer.Option(
        None,
        help="Your key file (default: the one in your config directory; a --bot seat has a"
        " key of its own per --name in the data folder, so one account fills several seats"
        " and each comes back to its seat after a crash).",
    ),
    bot: str | None = typer.Option(
        None,
        help="A bot plays your seat: random, greedy, ... (default: you play at the terminal).",
    ),
    transcript: Path | None = typer.Option(
        None, help="Where to write the game's transcript (default: your data directory)."
    ),
    timeout: float | None = typer.Option(
        None,
        min=1.0,
        help="Seconds a peer may take to answer (a move included) before the game ends as"
        f" abandoned (default: {PERSON_TIMEOUT:g} when you play at the terminal, so a person"
        f" may think; {BOT_TIMEOUT:g} with --bot).",
    ),
    grace: float | None = typer.Option(
        None,
        min=1.0,
        max=3600.0,
        help="Seconds a player who is not answering (a crash, a lost network) has to come back"
        " before the others may call the game abandoned: they then sign it together and the"
        " quitter loses it (default: twice the timeout, at most 60, never less than the"
        " timeout).",
    ),
    auto_pass: float = typer.Option(
        0.8, min=0.0, help="Seconds before a lone pass is answered for you (no --bot)."
    ),
    plain: bool = typer.Option(
        False, "--plain", help="Lines instead of the full-screen table (as in a pipe; no --bot)."
    ),
    seed: int | None = typer.Option(None, help="Seed for the bot (your cards stay secret)."),
    bind: str = typer.Option("0.0.0.0", help="Address to listen on (127.0.0.1: this machine)."),
    wait: float = typer.Option(600.0, help="Seconds to wait for the table to fill."),
    resume: bool = typer.Option(
        False, "--resume", help="Resume the saved game even if it looks stale."
    ),
    announce: bool = typer.Option(
        True, "--announce/--no-announce", help="Announce the table on the LAN while it fills."
    ),
    allow_aborters: bool = typer.Option(
        False,
        "--allow-aborters",
        help="Seat players your known-peers file records as having ended a table before the"
        " deal (by default they are refused: an abort must not buy a new seat draw).",
    ),
    relay: str | None = typer.Option(
        None,
        help="A relay (moska relay) where the players meet when they cannot reach each other:"
        " HOST:PORT; it goes into the invite.",
    ),
    relay_for_others: bool = typer.Option(
        False,
        "--relay-for-others",
        help="Also run a relay here (on --relay-port) for the players who cannot reach each"
        " other; it goes into the invite.",
    ),
    relay_port: int = typer.Option(
        0, min=0, max=65535, help="Port of --relay-for-others (0: any free port)."
    ),
    listen: bool = typer.Option(
        True,
        "--listen/--no-listen",
        help="Accept connections (--no-listen: reach everyone through the relay only).",
    ),
    spectators: int = typer.Option(
        4,
        min=0,
        max=16,
        help="Spectators at most (moska watch INVITE): they see what every player sees.",
    ),
    no_spectators: bool = typer.Option(
        False, "--no-spectators", help="Refuse every spectator (as --spectators 0)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per move."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log connections."),
    stats: Path | None = typer.Option(None, hidden=True),
    pace: float = typer.Option(0.0, hidden=True),  # the bot waits this long before each move
) -> None:
    """Open a table for a game (or a session of games, --games) on the network, announce it on
    the LAN and print how the others join it: an invite (moska join INVITE) with the ways to
    reach the table and the host's key."""
    from ..protocol.config import ConfigError, TableConfig
    from .relay import parse_relay

    relay_address = parse_relay(relay) if relay is not None else None
    if relay_address is not None and relay_for_others:
        raise fail("--relay names another relay; --relay-for-others runs one here: pick one")
    if not listen and relay_address is None:
        raise fail("--no-listen needs --relay: the players must reach this host somehow")

    if announce:
        discovery_settings()  # a bad MOSKA_DISCOVERY is an error before anything starts
    ident, made = _prepare(bot, name, identity, seed, verbose, auto_pass, transcript, plain)
    if timeout is None:
        timeout = BOT_TIMEOUT if bot is not None else PERSON_TIMEOUT
    try:
        config = TableConfig(
            preset,
            players,
            secrets.token_bytes(32),
            parse_options_strict_or_exit(option),
            timeout,
            games=games,
            grace=grace or 0.0,  # 0: the protocol's default for this timeout
        )
    except ConfigError as error:
        raise fail(str(error)) from None
    from ..net.node import Node

    saved = _saved_game(transcript, ident, resume)
    options = _node_options(
        ident,
        made,
        transcript,
        name,
        bot,
        saved,
        bind,
        wait,
        quiet,
        pace,
        stats,
        announce=announce and listen,
        allow_aborters=allow_aborters,
        relay=relay_address,
        listen=listen,
        relay_for_others=relay_port if relay_for_others else None,
        spectators=0 if no_spectators else spectators,
    )
    host_table = partial(Node.host, config=config, port=port)
    raise typer.Exit(_run(Node(options), made, saved, host_table, options.transcript))


def join(
    address: list[str] | None = typer.Argument(
        None,
        help="The table's invite (moska:..., whole or in pieces: spaces and line breaks in it"
        " do not matter) or HOST:PORT, as its host printed them; without it, look for tables"
        " on the LAN and join the one found (or choose among several).",
    ),
    name: str | None = typer.Option(
        None, help="Your name at the table (default: your login name, or the bot's)."
    ),
    identity: Path | None = typer.Option(
        None,
        help="Your key file (default: the one in your config directory; a --bot seat has a"
        " key of its own per --name in the data folder, so one account fills several seats"
        " and each comes back to its seat after a crash).",
    ),
    bot: str | None = typer.Option(
        None,
        help="A bot plays your seat: random, greedy, ... (default: you play at the terminal).",
    ),
    transcript: Path | None = typer.Option(
        None, help="Where to write the game's transcript (default: your data directory)."
    ),
    auto_pass: float = typer.Option(
        0.8, min=0.0, help="Seconds before a lone pass is answered for you (no --bot)."
    ),
    plain: bool = typer.Option(
        False, "--plain", help="Lines instead of the full-screen table (as in a pipe; no --bot)."
    ),
    timeout: float = typer.Option(
        10.0,
        help="Seconds to wait for each connection and handshake (the game's own timeout is"
        " the table's, set by its host).",
    ),
    seed: int | None = typer.Option(None, help="Seed for the bot (your cards stay secret)."),
    bind: str = typer.Option("0.0.0.0", help="Address to listen on for the other players."),
    listen_port: int = typer.Option(0, min=0, max=65535, help="Port for them (0: any)."),
    wait: float = typer.Option(600.0, help="Seconds to wait for the table to fill."),
    look: float = typer.Option(
        3.0, min=0.1, max=60.0, help="Seconds to look for tables on the LAN (no HOST:PORT)."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Resume the saved game even if it looks stale."
    ),
    expect: str | None = typer.Option(
        None,
        "--expect",
        help="The host's fingerprint (all 32 hex digits, e.g."
        " 3F9A-11C2-7B04-E9D1-5A0C-88D9-A0D7-4162, as the host reads it out or 'moska keygen'"
        " shows it) or its full key (64 hex digits): refuse to join any other host.",
    ),
    listen: bool = typer.Option(
        True,
        "--listen/--no-listen",
        help="Accept connections from the other players (--no-listen: only through the"
        " invite's relay).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per move."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log connections."),
    stats: Path | None = typer.Option(None, hidden=True),
    pace: float = typer.Option(0.0, hidden=True),  # the bot waits this long before each move
) -> None:
    """Join a table on the network: the invite its host printed (or HOST:PORT), or none to
    look for tables on the LAN."""
    from ..net.invite import looks_like_invite
    from .relay import parse_invite_or_exit

    pieces = [piece for piece in address or [] if piece.strip()]
    if len(pieces) > 1 and not looks_like_invite(pieces[0]):
        raise fail(f"unexpected extra argument: {' '.join(pieces[1:])} (moska join -h for help)")
    text = " ".join(pieces) if pieces else None
    invite = None
    if text is not None and looks_like_invite(text):
        check_invite_length(text)
        invite = parse_invite_or_exit(text)
        if expect is not None:
            raise fail("an invite already pins the host's key: leave out --expect")
    elif not listen:
        raise fail("--no-listen needs an invite with a relay (moska join moska:...)")
    target = parse_address(text) if text is not None and invite is None else None
    expected = parse_expect(expect)
    ident, made = _prepare(bot, name, identity, seed, verbose, auto_pass, transcript, plain)
    from ..net.node import Node

    saved = _saved_game(transcript, ident, resume)
    if saved is not None and not resume and not _of_the_table(saved, target, invite):
        typer.echo(
            f"the saved game of {saved.transcript} is of another table than this command"
            " names: not resuming it (the command that played it resumes it)"
        )
        saved = None
    if target is None and saved is None and invite is None:  # a saved game knows its host
        try:
            table = _choose_table(look, expected)
        except BaseException:
            _close_bot(made)
            raise
        target, expected = (table.address, table.port), table.key
    options = _node_options(
        ident,
        made,
        transcript,
        name,
        bot,
        saved,
        bind,
        wait,
        quiet,
        pace,
        stats,
        listen_port=listen_port,
        connect_timeout=timeout,
        listen=listen,
    )

    async def start(node: Node) -> Outcome:
        if invite is not None:
            return await node.join_invite(invite)
        assert target is not None
        return await node.join(*target, expect=expected)

    raise typer.Exit(_run(Node(options), made, saved, start, options.transcript))


def tables(
    wait: float = typer.Option(3.0, min=0.1, max=60.0, help="Seconds to listen for tables."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Count ignored datagrams."),
    json_file: Path | None = typer.Option(
        None,
        "--json",
        help="Also write the tables found as JSON to this file; - prints only the JSON, on stdout.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the tables, one a line."),
) -> None:
    """List the open tables on the LAN (address, host, preset, seats taken, fingerprint)."""
    from .common import check_json, json_to_stdout, write_json

    check_json(json_file)
    found = _look(wait)
    if json_file is not None:
        write_json(json_file, _tables_json(found, wait))
        if json_to_stdout(json_file):
            return
    if verbose:
        typer.echo(f"{found.received} datagrams heard, {found.ignored} ignored")
    if not found.tables:
        typer.echo(
            f"no open tables found on the LAN in {wait:g} s"
            " (a table can always be joined with: moska join HOST:PORT)"
        )
        return
    count = len(found.tables)
    if not quiet:
        typer.echo(f"{count} open table{'s' if count > 1 else ''} on the LAN:")
    _list_tables(found.tables)
    if not quiet:
        typer.echo("join one with: moska join ADDRESS:PORT (or moska join to choose)")


def _tables_json(found: Found, wait: float) -> dict[str, Any]:
    """``tables --json``: what was heard and every table, its announcement's fields."""
    return {
        "wait": wait,
        "received": found.received,
        "ignored": found.ignored,
        "tables": [
            {
                "address": t.address,
                "port": t.port,
                "name": t.name,
                "preset": t.preset,
                "players": t.players,
                "seats": t.seats,
                "options": dict(t.options),
                "timeout": t.timeout,
                "fingerprint": t.fingerprint,
                "key": t.key.hex(),
                "protocol": t.version,
                "joinable": t.joinable,
            }
            for t in found.tables
        ],
    }

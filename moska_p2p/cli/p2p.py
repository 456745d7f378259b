"""The peer-to-peer commands without a network: ``keygen``, ``simulate`` (a whole game
between in-process peers) and ``verify`` (transcripts).

The crypto and the protocol are imported when a command runs, not for ``moska --help``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from ..engine import PRESETS, Move, View
from .common import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_NOT_A_TRANSCRIPT,
    check_bots,
    check_folder,
    check_json,
    fail,
    file_kind,
    json_to_stdout,
    parse_options_lenient,
    split_bots,
    write_json,
)


def keygen(
    identity: Path | None = typer.Option(
        None, "--identity", help="Where to keep the key (default: your config directory)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace an existing key."),
) -> None:
    """Create your identity key (Ed25519), or show the one you have."""
    from ..crypto.identity import Identity, IdentityError, default_identity_path, load_or_create

    path = identity or default_identity_path()
    old = None
    try:
        if force and path.exists():
            with contextlib.suppress(IdentityError, OSError):  # unreadable: nothing to vouch
                old = Identity.load(path)
        if force or not path.exists():
            key = Identity.generate()
            key.save(path, overwrite=force)
            typer.echo(f"created {path}")
        else:
            key = load_or_create(path)
            typer.echo(f"you already have a key at {path} (--force replaces it)")
    except (IdentityError, OSError) as error:
        raise fail(str(error)) from None
    typer.echo(f"fingerprint: {key.fingerprint}  (read it aloud so others can recognise you)")
    if old is not None:
        from ..net.known import (
            KnownPeers,
            KnownPeersError,
            default_known_peers_path,
            key_change_statement,
        )

        with contextlib.suppress(KnownPeersError, OSError):  # your own name in your own file
            KnownPeers.load(default_known_peers_path()).replace_key(
                old.public_bytes, key.public_bytes
            )
        typer.echo(
            "your old key vouches for the new one: whoever knew the old key runs\n"
            f"    moska trust {key_change_statement(old, key.public_bytes)}"
        )


def simulate(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    players: int = typer.Option(4, min=2, max=6),
    bots: str = typer.Option(
        "",
        help="Comma-separated bots, one per seat in seat order, or one for every seat"
        " (default: random for every seat).",
    ),
    transcripts: Path | None = typer.Option(
        None, help="Write every peer's transcript into this directory."
    ),
    seed: int | None = typer.Option(
        None,
        help="Seed of everything random (keys, table, shuffles, bots): the same seed repeats"
        " the same game exactly. For tests and examples only, never for a real game.",
    ),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Change a preset option, NAME=VALUE (repeatable)."
    ),
    json_file: Path | None = typer.Option(
        None,
        "--json",
        help="Also write the result as JSON to this file; - prints only the JSON, on stdout.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the result line."),
) -> None:
    """Play a whole game between in-process peers through the full protocol (no sockets)."""
    from ..bots.loader import BotLoadError, load_bot
    from ..crypto.identity import Identity
    from ..protocol.config import ConfigError, TableConfig
    from ..protocol.simulate import Network, make_peers, save_transcripts
    from ..table.simulate import run_game

    specs = split_bots(bots) or ["random"]
    if len(specs) == 1:
        specs = specs * players  # one bot for every seat, as in play
    if len(specs) != players:
        raise fail(f"{players} players need {players} bots (or one for all), not {len(specs)}")
    check_bots(specs)
    if transcripts is not None:
        check_folder(transcripts, "--transcripts")
    check_json(json_file)
    words = not json_to_stdout(json_file)  # with --json -, stdout is the JSON alone

    def say(text: str, result_line: bool = False) -> None:
        if words and (result_line or not quiet):
            typer.echo(text)

    nonce = secrets.token_bytes(32) if seed is None else _seeded(seed, "table")
    try:
        config = TableConfig(preset, players, nonce, dict(parse_options_lenient(option)))
        made = [load_bot(spec, seed=(seed or 0) * 10 + i) for i, spec in enumerate(specs)]
    except (ConfigError, BotLoadError, ValueError) as error:
        raise fail(str(error)) from None
    if seed is None:
        identities = [Identity.generate() for _ in range(players)]
    else:  # not for real games: keys anyone can derive from the seed
        identities = [Identity.from_seed(_seeded(seed, f"key {i}")) for i in range(players)]
    names = [f"peer{i}" for i in range(players)]  # the seats are drawn after the names
    net = Network(make_peers(config, identities, seed=seed, names=names))
    # The seat draw permutes the peers: every peer asks the bot named for the seat it drew.
    result = run_game(net, [_BySeat(made) for _ in range(players)])
    for bot in made:
        close = getattr(bot, "close", None)
        if callable(close):
            close()
    first = result.sessions[0]
    game = first.game_id.hex()[:16] if first.game_id else "?"
    say(f"game {game}: {preset}, {players} peers")
    for seat, key in enumerate(first.seats):
        peer = first.peers[key]
        say(f"  seat {seat}: {specs[seat]} ({peer.name}, {_fp(key)})")
    say(f"  {len(first.moves)} moves, {result.frames} frames, {result.bytes} bytes")
    verdicts = [v for v in result.verdicts if v is not None]
    saved: list[Path] = []
    if transcripts is not None:
        try:
            saved = save_transcripts(result, transcripts)
        except OSError as error:
            raise fail(f"--transcripts {transcripts}: {error.strerror or error}", 1) from None
        for path in saved:
            say(f"  transcript: {path}")
    if json_file is not None:
        write_json(
            json_file,
            {
                "game_id": first.game_id.hex() if first.game_id else None,
                "preset": preset,
                "players": players,
                "seed": seed,
                "seats": [
                    {"seat": s, "bot": specs[s], "name": first.peers[k].name, "fingerprint": _fp(k)}
                    for s, k in enumerate(first.seats)
                ],
                "moves": len(first.moves),
                "frames": result.frames,
                "bytes": result.bytes,
                "losers": list(first.losers),
                "final_state_hash": first.final_hash,
                "verdict": verdicts[0].describe() if verdicts else None,
                "transcripts": [str(path) for path in saved],
            },
        )
    if verdicts:
        typer.echo(f"stopped: {verdicts[0].describe()}", err=True)
        raise typer.Exit(EXIT_FAILED)
    losers = ", ".join(f"seat {s} ({specs[s]})" for s in first.losers)
    say(f"result: {losers or 'a draw'} lost; final state {first.final_hash[:16]}", True)


def _seeded(seed: int, what: str) -> bytes:
    """32 bytes derived from ``--seed`` (``simulate`` only: never for a real game)."""
    return hashlib.sha256(f"moska simulate --seed {seed}: {what}".encode()).digest()


class _BySeat:
    """A peer's seat in ``simulate``: it asks the bot named for the seat the peer drew, so
    the i-th bot of ``--bots`` plays seat i whatever the draw."""

    def __init__(self, bots: Sequence[Any]) -> None:
        from ..table.seat import is_trusted

        self.bots = bots
        self.trusted_fast = all(is_trusted(b) for b in bots)

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        return self.bots[view.seat].choose(view, legal_moves)  # type: ignore[no-any-return]


def _fp(key: bytes) -> str:
    from ..crypto.identity import fingerprint_of

    return fingerprint_of(key)


def _relayed_words(seats: list[int]) -> str:
    """What the owner's verdict says of its paths (§23): silence over a relay cannot be told
    from a relay holding frames back."""
    if not seats:
        return ""
    where = ", ".join(f"seat {s}" for s in seats)
    return f"; the owner reached {where} through a relay (a relay can hold frames back)"


def verify(
    files: list[Path] = typer.Argument(
        ..., help="Transcripts written by peers, or folders of them (every *.moska in each)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print each result as a JSON line."),
) -> None:
    """Check transcripts: every signature, every shuffle proof, every key, every move; and,
    given a folder or a session file, the sessions of games among them (RULES M24): the chain
    of games, every player's signed session result (the *-session.moska files), and the
    session's results table. An event's folder (moska tournament): its draw, seating, table
    results and standings recomputed from the signed statements and its transcripts.

    Exit 0 when everything checks; 1 when a file is INVALID (a frame that does not check: a
    forgery, a cheat, records that disagree); else 4 when a file is not a moska transcript,
    3 when one is incomplete (its writer stopped before the game's end: a crash or a cut)."""
    from ..event.folder import is_event_folder
    from ..protocol.tally import is_session_file
    from ..protocol.transcript import (
        INCOMPLETE,
        INVALID,
        NOT_A_TRANSCRIPT,
        Report,
        verify_transcript,
    )
    from .tournament import verify_events

    events = [path for path in files if is_event_folder(path)]
    if events:  # an event folder: its draw, tables and standings recomputed
        code = verify_events(events, as_json)
        files = [path for path in files if path not in events]
        if code or not files:
            raise typer.Exit(code)
    invalid = False
    statuses: set[str] = set()
    paths = _transcripts(files)
    session_files = [p for p in paths if is_session_file(p)]
    checked: list[tuple[Path, Report]] = []
    for file in paths:
        if file in session_files:
            continue
        report = verify_transcript(file)
        checked.append((file, report))
        statuses.add(report.status)
        invalid |= report.status == INVALID
        if as_json:
            data = report.to_json()
            keys = ("valid", "status", "game_id", "final_state_hash", "losers", "fault", "verdict")
            data["lost_contact"] = report.lost_contact  # seats named, never losers (§15.4)
            data["status"] = report.status  # valid, invalid, incomplete, not-a-transcript
            # seats the owner reached through a relay when it stopped (§7.11, §23)
            typer.echo(json.dumps({k: data[k] for k in (*keys, "lost_contact", "relayed")}))
        elif report.valid and report.verdict is not None:
            losers = ", ".join(f"seat {s}" for s in report.losers) or "nobody"
            contact = ", ".join(f"seat {s}" for s in report.lost_contact)
            typer.echo(
                f"valid: {file.name}: game {report.game_id} stopped after {report.moves} moves:"
                f" {report.verdict}; "
                + (f"lost contact with {contact}, nobody lost" if contact else f"forfeit: {losers}")
                + _relayed_words(report.relayed_seats)
            )
        elif report.valid:
            losers = ", ".join(f"seat {s}" for s in report.losers) or "nobody (a draw)"
            typer.echo(
                f"valid: {file.name}: game {report.game_id}, {report.moves} moves,"
                f" {report.frames} frames; lost: {losers}; final state {report.final_state_hash}"
            )
        elif report.status == INCOMPLETE:
            fault = (report.fault or "").removeprefix(f"{INCOMPLETE}: ")
            typer.echo(f"incomplete: {file.name}: {fault}", err=True)
        elif report.status == NOT_A_TRANSCRIPT:
            typer.echo(f"{file.name}: {report.fault}", err=True)
        else:
            typer.echo(f"INVALID: {file.name}: {report.fault}", err=True)
    if session_files or any(path.is_dir() for path in files):  # one game's file: that game
        invalid |= not _verify_sessions(checked, session_files, as_json)
    invalid |= not _compare_records(checked, as_json)
    if invalid:
        raise typer.Exit(EXIT_FAILED)
    if NOT_A_TRANSCRIPT in statuses:
        raise typer.Exit(EXIT_NOT_A_TRANSCRIPT)
    if INCOMPLETE in statuses:
        raise typer.Exit(EXIT_INCOMPLETE)


def _verify_sessions(
    checked: Sequence[tuple[Path, Any]], session_files: list[Path], as_json: bool
) -> bool:
    """Check every session the transcripts belong to, with the signed results of the
    session files; print each one's verdict and results table. Whether all verify."""
    from ..protocol.tally import (
        TallyError,
        Transcript,
        check_session,
        file_digest,
        read_session_file,
        session_of,
    )
    from .results import results_table

    groups: dict[bytes, list[Transcript]] = {}
    for file, report in checked:
        sid = session_of(report)
        if sid is not None:
            groups.setdefault(sid, []).append(Transcript(report, file_digest(file), file.name))
    results: dict[bytes, list[bytes]] = {}
    good = True
    for path in session_files:
        try:
            _, sid, frames = read_session_file(path)
        except (TallyError, OSError) as error:
            typer.echo(f"INVALID: {path.name}: {error}", err=True)
            good = False
            continue
        if sid not in groups:
            typer.echo(f"INVALID: {path.name}: none of the transcripts is of its session", err=True)
            good = False
            continue
        results.setdefault(sid, []).extend(frames)
    for sid, transcripts in groups.items():
        check = check_session(transcripts, results.get(sid, []))
        tally = check.tally
        games = len(tally.games) if tally is not None else 0
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "session": sid.hex(),
                        "valid": check.fault is None,
                        "fault": check.fault,
                        "games": games,
                        "signed": check.results,
                        "losses": tally.losses if tally is not None else [],
                        "notes": list(check.notes),
                    }
                )
            )
        elif check.fault is None and tally is not None:
            typer.echo(
                f"valid: session {sid.hex()[:16]}: {games} games in a chain, {len(transcripts)}"
                f" transcripts, result signed by {check.results} of {len(tally.names)} players"
                + (f" ({len(check.left)} left between games)" if check.left else "")
            )
            for line in results_table(tally):
                typer.echo(line)
            for note in check.notes:
                typer.echo(note)
        else:
            typer.echo(f"INVALID: session {sid.hex()[:16]}: {check.fault}", err=True)
        good &= check.fault is None
    return good


def _compare_records(checked: Sequence[tuple[Path, Any]], as_json: bool) -> bool:
    """Several peers' records of one single game (not of a session: those are compared by
    the session's check): say whether they agree, or exactly how they differ. Records of
    lost contact never contradict the others (PROTOCOL.md §15.4); records that decide the
    game (finished, or a conviction) and differ are a fault. Whether nothing contradicts."""
    from ..protocol.tally import Transcript, contact_split, decided, session_of

    games: dict[str, list[tuple[Path, Any]]] = {}
    for file, report in checked:
        if report.valid and report.game_id and session_of(report) is None:
            games.setdefault(report.game_id, []).append((file, report))
    good = True
    for gid, copies in games.items():
        owners = {r.owner_key for _, r in copies}
        if len(owners) < 2:
            continue
        deciding = [(f, r) for f, r in copies if decided(r)]
        outcomes = {(r.final_state_hash, tuple(r.losers)) for _, r in deciding}
        agree = len(outcomes) <= 1
        good &= agree
        if not agree:
            said = "; ".join(f"{f.name}: lost {r.losers or 'nobody'}" for f, r in deciding)
            line = f"the records of game {gid[:16]} disagree: {said}"
        elif deciding:
            line = f"game {gid[:16]}: {len(owners)} players' records agree"
            if len(deciding) < len(copies):
                line += " (some only lost contact before the end)"
        else:
            first = copies[0][1]
            marked = [Transcript(r, b"", f.name) for f, r in copies]
            line = f"game {gid[:16]}: " + contact_split(marked, first.seats, first.names)
        if as_json:
            typer.echo(json.dumps({"game_id": gid, "records": len(copies), "agree": agree,
                                   "note": line}))  # fmt: skip
        else:
            typer.echo(line, err=not agree)
    return good


def _transcripts(paths: list[Path]) -> list[Path]:
    """The files ``verify`` checks: each file named, and every ``*.moska`` of each folder;
    refused at once (before any is checked) when one is missing or is an arena record."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.glob("*.moska") if p.is_file())
            if not inside:
                raise fail(f"no transcripts (*.moska) in the folder {path}")
            found += inside
        elif not path.exists():
            raise fail(f"nothing at {path}: no such file or folder")
        elif file_kind(path) == "json":
            raise fail(
                f"{path} is a saved arena game, not a peer transcript: check it with"
                f" moska replay-check {path}"
            )
        else:
            found.append(path)
    return found

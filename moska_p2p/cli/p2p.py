"""The peer-to-peer commands without a network: ``keygen``, ``simulate`` (a whole game
between in-process peers) and ``verify`` (transcripts).

The crypto and the protocol are imported when a command runs, not for ``moska --help``.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import typer

from ..engine import PRESETS
from .common import fail, parse_options_lenient


def keygen(
    identity: Path | None = typer.Option(
        None, "--identity", help="Where to keep the key (default: your config directory)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace an existing key."),
) -> None:
    """Create your identity key (Ed25519), or show the one you have."""
    from ..crypto.identity import Identity, IdentityError, default_identity_path, load_or_create

    path = identity or default_identity_path()
    try:
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


def simulate(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    players: int = typer.Option(4, min=2, max=6),
    bots: str = typer.Option(
        "", help="Comma-separated bots, one per seat (default: random for every seat)."
    ),
    transcripts: Path | None = typer.Option(
        None, help="Write every peer's transcript into this directory."
    ),
    seed: int | None = typer.Option(None, help="Seed for the peers' randomness (repeatable)."),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Change a preset option, NAME=VALUE (repeatable)."
    ),
) -> None:
    """Play a whole game between in-process peers through the full protocol (no sockets)."""
    from ..bots.loader import BotLoadError, load_bot
    from ..crypto.identity import Identity
    from ..protocol.config import ConfigError, TableConfig
    from ..protocol.simulate import Network, make_peers, save_transcripts
    from ..table.simulate import run_game

    specs = [b.strip() for b in bots.split(",") if b.strip()] or ["random"] * players
    if len(specs) != players:
        raise fail(f"{players} players need {players} bots, not {len(specs)}")
    try:
        config = TableConfig(
            preset, players, secrets.token_bytes(32), dict(parse_options_lenient(option))
        )
        made = [load_bot(spec, seed=(seed or 0) * 10 + i) for i, spec in enumerate(specs)]
    except (ConfigError, BotLoadError, ValueError) as error:
        raise fail(str(error)) from None
    identities = [Identity.generate() for _ in range(players)]
    names = [f"{spec.split(':')[0]}-{i}" for i, spec in enumerate(specs)]
    net = Network(make_peers(config, identities, seed=seed, names=names))
    result = run_game(net, made)
    for bot in made:
        close = getattr(bot, "close", None)
        if callable(close):
            close()
    first = result.sessions[0]
    game = first.game_id.hex()[:16] if first.game_id else "?"
    typer.echo(f"game {game}: {preset}, {players} peers")
    for seat, key in enumerate(first.seats):
        peer = first.peers[key]
        typer.echo(f"  seat {seat}: {peer.name} ({_fp(key)})")
    typer.echo(f"  {len(first.moves)} moves, {result.frames} frames, {result.bytes} bytes")
    verdicts = [v for v in result.verdicts if v is not None]
    if transcripts is not None:
        for path in save_transcripts(result, transcripts):
            typer.echo(f"  transcript: {path}")
    if verdicts:
        typer.echo(f"stopped: {verdicts[0].describe()}", err=True)
        raise typer.Exit(1)
    losers = ", ".join(f"seat {s} ({first.peers[first.seats[s]].name})" for s in first.losers)
    typer.echo(f"result: {losers or 'a draw'} lost; final state {first.final_hash[:16]}")


def _fp(key: bytes) -> str:
    from ..crypto.identity import fingerprint_of

    return fingerprint_of(key)


def verify(
    files: list[Path] = typer.Argument(..., help="Transcripts written by peers."),
    as_json: bool = typer.Option(False, "--json", help="Print each result as a JSON line."),
) -> None:
    """Check transcripts: every signature, every shuffle proof, every key, every move."""
    from ..protocol.transcript import verify_transcript

    invalid = False
    for file in files:
        if not file.is_file():
            raise fail(f"no file {file}")
        report = verify_transcript(file)
        invalid |= not report.valid
        if as_json:
            data = report.to_json()
            keys = ("valid", "game_id", "final_state_hash", "losers", "fault", "verdict")
            typer.echo(json.dumps({k: data[k] for k in keys}))
        elif report.valid and report.verdict is not None:
            losers = ", ".join(f"seat {s}" for s in report.losers) or "nobody"
            typer.echo(
                f"valid: {file.name}: game {report.game_id} stopped after {report.moves} moves:"
                f" {report.verdict}; forfeit: {losers}"
            )
        elif report.valid:
            losers = ", ".join(f"seat {s}" for s in report.losers) or "nobody (a draw)"
            typer.echo(
                f"valid: {file.name}: game {report.game_id}, {report.moves} moves,"
                f" {report.frames} frames; lost: {losers}; final state {report.final_state_hash}"
            )
        else:
            typer.echo(f"INVALID: {file.name}: {report.fault}", err=True)
    if invalid:
        raise typer.Exit(1)

"""``moska trust``: accept a known player's new key, the one step of a key change (see
:mod:`moska_p2p.net.known`)."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import fail


def trust(
    what: str = typer.Argument(
        ...,
        help="The player's key change statement (moska-newkey:..., signed by the old key), or"
        " the player's NAME to forget its key (the next table teaches the new one).",
        show_default=False,
    ),
    host: str = typer.Option(
        "",
        "--host",
        help="With a NAME: forget it at the tables of this host only (its fingerprint).",
        show_default=False,
    ),
    known_peers: Path | None = typer.Option(
        None, "--known-peers", help="The known-peers file (default: your config directory)."
    ),
) -> None:
    """Accept a known player's new key: its key change statement, checked against the old
    key, or (no statement: the old key is lost) forget the name so the next table teaches
    the new key."""
    from ..crypto.identity import fingerprint_of, parse_fingerprint
    from ..net.known import (
        STATEMENT,
        KnownPeers,
        KnownPeersError,
        StatementError,
        default_known_peers_path,
        parse_statement,
    )

    path = known_peers or default_known_peers_path()
    try:
        known = KnownPeers.load(path)
        if what.strip().lower().startswith(STATEMENT):
            if host:
                raise fail("--host goes with a NAME; a statement names its own key")
            old, new = parse_statement(what)
            names = known.replace_key(old, new)
            if not names:
                typer.echo(
                    f"{path} does not know the key {fingerprint_of(old)}: nothing to change"
                    " (the new one is learnt at the next table)"
                )
                return
            shown = ", ".join(repr(n) for n in sorted(set(names)))
            typer.echo(
                f"{shown}: the key {fingerprint_of(old)} is now {fingerprint_of(new)}"
                f" (vouched for by the old key) in {path}"
            )
            return
        at = None
        if host:
            try:
                wanted = parse_fingerprint(host)
            except ValueError as error:
                raise fail(str(error)) from None
            hosts = [h for h in known.hosts_of(what) if fingerprint_of(h) == wanted]
            if not hosts:
                raise fail(f"{path} knows no {what!r} at the tables of the host {wanted}")
            at = hosts[0]
        count = known.forget(what, at)
    except (KnownPeersError, StatementError, OSError) as error:
        raise fail(str(error)) from None
    if not count:
        typer.echo(f"{path} does not know {what!r}: nothing to forget")
        return
    typer.echo(
        f"forgot {what!r}'s key ({count} {'line' if count == 1 else 'lines'} of {path}):"
        " the next table teaches the new one; check its fingerprint with the player"
    )

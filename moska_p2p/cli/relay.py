"""``moska relay``: run a relay (:mod:`moska_p2p.net.relay`) on a machine the players can
reach, so that peers that cannot accept connections play anyway; and the network options the
relay and invites add to ``host`` and ``join``."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

import typer

from .common import EXIT_FAILED, EXIT_INTERRUPTED, fail, is_interrupt

if TYPE_CHECKING:
    from ..net.invite import Invite

DEFAULT_PORT = 7117


def _raise_descriptor_limit(wanted: int) -> None:
    """Let the relay hold the connections it is allowed (the soft limit is often 1,024): up
    to the hard limit, which only the machine's operator can raise."""
    try:
        import resource
    except ImportError:  # not on this system: the accept loop sheds strangers instead
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def parse_relay(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of a relay (``HOST`` alone: the default port)."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        host, port = text.strip(), str(DEFAULT_PORT)
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise fail(f'"{text}" is not a relay\'s HOST:PORT (e.g. relay.example.org:{DEFAULT_PORT})')
    return host, int(port)


def parse_invite_or_exit(text: str) -> Invite:
    """The invite, or the one-line reason it cannot be used (exit code 2)."""
    from ..net.invite import InviteError, parse_invite

    try:
        return parse_invite(text)
    except InviteError as error:
        raise fail(f"not a usable invite: {error}") from None


def relay(
    bind: str = typer.Option("0.0.0.0", help="Address to listen on."),
    port: int = typer.Option(DEFAULT_PORT, min=0, max=65535, help="Port (0: any free port)."),
    max_connections: int = typer.Option(4096, min=2, help="Connections at most, in all."),
    max_tables: int = typer.Option(1024, min=1, help="Tables (rooms) at most, in all."),
    per_network: int = typer.Option(
        8,
        min=1,
        max=4096,
        help="Connections at most from one source network (an address; an IPv6 /64), and keys"
        " of one room from it; rooms it may open: a quarter, at least 2. Raise it for a club"
        " whose members all come from one address (a club event: twice the entrants, and two).",
    ),
    room_size: int = typer.Option(
        16, min=2, max=1024, help="Keys in one room (a club event's room: every entrant)."
    ),
    token: str = typer.Option(
        "",
        help="A club's private relay: only peers that hold this token open tables (set"
        " MOSKA_RELAY_TOKEN to it where the host runs); invites still let the others in.",
        envvar="MOSKA_RELAY_TOKEN",
        show_default=False,
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log connections."),
) -> None:
    """Relay for peers that cannot reach each other (behind NAT or firewalls): they connect
    out to it and meet at their table's room. It sees who plays with whom and how much, but
    cannot read hidden cards, forge a move or pass for a player: it can only forward or
    drop. Only holders of a table's invite enter its room. Give hosts its address: moska host
    --relay HOST:PORT."""
    import trio

    from ..net.links import listen_failure
    from ..net.relay import RelayServer
    from ..net.relay_proto import club_caps
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    _raise_descriptor_limit(max_connections + 64)
    caps = club_caps(per_network, room_size, max_connections, max_tables, token)
    server = RelayServer(caps)
    failure: list[str] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(server.serve, bind, port)
            except OSError as error:
                failure.append(listen_failure(bind, port, error))
                return
            typer.echo(f"relay listening on {bind}:{server.port}")
            typer.echo(
                f"hosts use it with: moska host --relay ADDRESS:{server.port} (ADDRESS: this"
                " machine's address as the players reach it)"
            )

    try:
        trio.run(main)
    except BaseException as error:
        if not is_interrupt(error):
            raise
        typer.echo("relay stopped")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if failure:
        raise fail(failure[0], EXIT_FAILED)

"""``python -m moska_p2p.net host|join ...``: the network commands on their own, until the main
``moska`` command line registers them (:func:`moska_p2p.cli_net.register`)."""

from __future__ import annotations

import typer

from ..cli_net import register

app = typer.Typer(
    help="Moska peer to peer: host or join a table on the network.",
    no_args_is_help=True,
    add_completion=False,
)
register(app)

if __name__ == "__main__":
    app()

"""The network layer: peers on real TCP, with trio (DESIGN.md, "Network and user interface").

The sockets and the peer's event loop are here; besides this package only the drivers that
run a node import trio (:mod:`moska_p2p.table.networked` and :mod:`moska_p2p.table.seat`, the
seat's side of the loop, and the ``host``/``join``/``watch``/``relay`` commands that start one).
:mod:`.wire` holds the lobby and link messages and a framed reader, :mod:`.link` one game
connection, :mod:`.persist` the files that let a crashed peer resume, :mod:`.discovery` the
signed multicast beacon that lets tables be found on the LAN, and :mod:`.node` the peer
itself, which owns one part per job: :mod:`.links` (our port, handshakes, game links;
:mod:`.admission` the caps on strangers), :mod:`.runner` (one game, then the next, with
:mod:`.sessions` between games), :mod:`.lobby` (who may sit, the roster) and
:mod:`.watch_host` (spectators); :mod:`.state` what they share and :mod:`.port` the seat's
side (a bot or a person). Relays: :mod:`.relay_proto`, :mod:`.relay`, :mod:`.relay_client`,
:mod:`.invite`; spectators' own side: :mod:`.watch`.
"""

from .node import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Node, NodeOptions, Outcome

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "Node", "NodeOptions", "Outcome"]

"""The network layer: peers on real TCP, with trio (DESIGN.md, "Network and user interface").

Nothing outside this package imports trio. :mod:`.wire` holds the lobby and link messages and
a framed reader, :mod:`.link` one game connection, :mod:`.persist` the files that let a
crashed peer resume, :mod:`.discovery` the signed multicast beacon that lets tables be found
on the LAN, and :mod:`.node` the peer itself, split by job: :mod:`.lobby` (who may sit, the
roster), :mod:`.links` (accept, handshake, game links; :mod:`.admission` the caps on
strangers), :mod:`.runner` (one game, then the next), :mod:`.sessions` (between games),
:mod:`.state` (the node's fields) and :mod:`.port` (the seat's side: a bot or a person).
"""

from .node import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Node, NodeOptions, Outcome

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "Node", "NodeOptions", "Outcome"]

"""The network layer: peers on real TCP, with trio (DESIGN.md, "Network and user interface").

Nothing outside this package imports trio. :mod:`.wire` holds the lobby and link messages and
a framed reader, :mod:`.link` one game connection, :mod:`.persist` the files that let a
crashed peer resume, :mod:`.discovery` the signed multicast beacon that lets tables be found
on the LAN, and :mod:`.node` the peer itself: lobby, mesh, ticker, bot or person.
"""

from .node import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Node, NodeOptions, Outcome

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "Node", "NodeOptions", "Outcome"]

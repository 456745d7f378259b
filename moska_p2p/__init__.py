"""moska-p2p: peer-to-peer play of the Finnish card game Moska and its family.

The package is layered (see the design notes): cards and rules, a pure deterministic engine,
and later crypto, protocol, net and cli layers on top.
"""

__version__ = "0.1.0"

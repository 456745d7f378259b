"""moska-p2p: peer-to-peer play of the Finnish card game Moska and its family.

The package is layered, inside out (ARCHITECTURE.md draws it; ``tests/arch`` enforces it):
:mod:`.cards` and the rules, :mod:`.engine` (pure and deterministic), :mod:`.crypto`
(identities, the mental-poker deck and its proofs), :mod:`.protocol` (sans-IO: the wire, the
peer session, transcripts), :mod:`.bots`, :mod:`.net` (peers on TCP with trio: lobby, links,
relays, spectators), :mod:`.table` (who plays a seat), :mod:`.arena`, :mod:`.ui` (the
terminal) and :mod:`.cli` (the ``moska`` command). :class:`Error` is the root of the
package's own exceptions (:mod:`.errors`).
"""

from .errors import ConfigError, Error

__version__ = "0.1.0"

__all__ = ["ConfigError", "Error", "__version__"]

"""moska-p2p: peer-to-peer play of the Finnish card game Moska and its family.

The package is layered, inside out (ARCHITECTURE.md draws it; ``tests/arch`` enforces it):
:mod:`.cards` and the rules, :mod:`.engine` (pure and deterministic), :mod:`.crypto`
(identities, the mental-poker deck and its proofs), :mod:`.protocol` (sans-IO: the wire, the
peer session, transcripts), :mod:`.bots` (with :mod:`.rl`, a learning environment, beside
them), :mod:`.net` (peers on TCP with trio: lobby, links, relays, spectators),
:mod:`.tournament` (a club event, sans-IO), :mod:`.table` (who plays a seat),
:mod:`.arena`, :mod:`.ui` (the terminal) and :mod:`.cli` (the ``moska`` command). Below every
layer: :mod:`.errors` (:class:`Error`, the root of the package's own exceptions) and
:mod:`.dirs` (the default folders); :mod:`.i18n` picks the language a person reads.

Each package's ``__init__`` declares its public surface in ``__all__``: the names the other
packages use (``tests/arch/test_exports.py`` checks it).
"""

from .errors import ConfigError, Error

__version__ = "0.1.0"

__all__ = ["ConfigError", "Error", "__version__"]

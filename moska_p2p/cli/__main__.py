"""``python -m moska_p2p.cli``, as it ran before the command line became a package
(``python -m moska_p2p`` is the same)."""

from . import main

if __name__ == "__main__":  # pragma: no cover
    main()

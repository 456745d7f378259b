"""``python -m moska_p2p``: the ``moska`` command line (:func:`moska_p2p.cli.main`)."""

from .cli import main

if __name__ == "__main__":  # pragma: no cover
    main()

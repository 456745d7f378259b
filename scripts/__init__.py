"""The repository's tools (run each as ``python scripts/NAME.py``); a package only so that
``scripts.lib`` is found here first, never in another checkout on ``sys.path``."""

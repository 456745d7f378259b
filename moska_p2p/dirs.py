"""Where moska-p2p keeps its files by default: one resolver, platformdirs', for every layer.

``config_dir()`` holds the identity and the known peers, ``data_dir()`` the games' transcripts.
Both follow the XDG base directory specification on every system (``$XDG_CONFIG_HOME`` and
``$XDG_DATA_HOME``, ``~/.config`` and ``~/.local/share`` when they are unset or relative),
where these files have always been: a key must not move to another folder, and with it the
trust the other players put in it. This module imports nothing of the package.
"""

from __future__ import annotations

from pathlib import Path

from platformdirs.unix import Unix

APP = "moska-p2p"


def _xdg() -> Unix:
    return Unix(appname=APP, appauthor=False)


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/moska-p2p``: the identity and the known peers."""
    return Path(_xdg().user_config_dir)


def data_dir() -> Path:
    """``$XDG_DATA_HOME/moska-p2p``: saved games."""
    return Path(_xdg().user_data_dir)

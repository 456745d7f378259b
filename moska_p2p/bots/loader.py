"""Load a bot by name (``greedy``), by path (``bots/my_bot.py:MyBot``) or as an external
process (``exec:python3 other.py``).

Names may carry parameters after a colon, ``ismcts:time=0.05`` or ``ismcts:iterations=300``,
passed to the bot's constructor as keyword arguments.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .api import Bot
from .builtin import GreedyBot, RandomBot, ShedderBot
from .expert import ExpertBot
from .ismcts import IsmctsBot

# Every built-in bot is a class of this package: the installed wheel needs nothing else.
BUILTIN_BOTS: dict[str, Callable[..., Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "shedder": ShedderBot,
    "ismcts": IsmctsBot,
    "expert": ExpertBot,
}


class BotLoadError(ValueError):
    """A bot specification that names no loadable bot."""


def _parse_params(text: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in text.split(","):
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise BotLoadError(f'bot parameter "{item}" is not NAME=VALUE')
        number: Any = value
        for cast in (int, float):
            try:
                number = cast(value)
                break
            except ValueError:
                continue
        params[key.strip()] = number
    return params


def _construct(factory: Callable[..., Bot], seed: int | None, params: dict[str, Any]) -> Bot:
    try:
        signature = inspect.signature(factory)
        accepts_seed = "seed" in signature.parameters or any(
            p.kind is p.VAR_KEYWORD for p in signature.parameters.values()
        )
    except (TypeError, ValueError):
        accepts_seed = False
    if accepts_seed and seed is not None and "seed" not in params:
        params = params | {"seed": seed}
    try:
        return factory(**params)
    except TypeError as error:
        raise BotLoadError(f"cannot make the bot: {error}") from None


def load_bot(spec: str, seed: int | None = None) -> Bot:
    """Make a bot from its specification (see the module docstring)."""
    spec = spec.strip()
    if spec.startswith("exec:"):
        from .external import ExternalBot

        command = spec[len("exec:") :].strip()
        if not command:
            raise BotLoadError("exec: needs a command, e.g. exec:python3 my_bot.py")
        return ExternalBot(command, seed=seed)
    name, _, param_text = spec.partition(":")
    if name in BUILTIN_BOTS:
        return _construct(BUILTIN_BOTS[name], seed, _parse_params(param_text))
    if ".py" in name or "/" in name:
        return _load_from_file(spec, seed)
    known = ", ".join(BUILTIN_BOTS)
    raise BotLoadError(
        f'unknown bot "{spec}": use a built-in name ({known}), a file such as'
        " bots/my_bot.py:MyBot, or exec:COMMAND"
    )


def _load_from_file(spec: str, seed: int | None) -> Bot:
    path_text, _, rest = spec.partition(".py:")
    if not rest and spec.endswith(".py"):
        raise BotLoadError(f'"{spec}" names a file but no class: write {spec}:ClassName')
    path = Path(path_text + ".py")
    if not path.is_file():
        raise BotLoadError(f'bot file "{path}" does not exist')
    class_name, _, param_text = rest.partition(":")
    module_name = f"moska_user_bot_{abs(hash(path.resolve()))}"
    module = sys.modules.get(module_name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise BotLoadError(f'cannot import "{path}"')
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[module_name]
            raise BotLoadError(f'importing "{path}" failed: {error!r}') from None
    factory = getattr(module, class_name, None)
    if factory is None:
        raise BotLoadError(f'"{path}" has no "{class_name}"')
    bot = _construct(factory, seed, _parse_params(param_text))
    if not callable(getattr(bot, "choose", None)):
        raise BotLoadError(f'"{class_name}" has no choose(view, legal_moves) method')
    return bot

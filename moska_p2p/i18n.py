"""The language a person reads: English by default, Finnish (``fi``) on request.

The one place that picks the language and installs its translation. Everything a person sees
at the table, in the help and in ``moska rules`` is written in English in the code and marked
``_()`` (or ``ngettext`` for counts); the Finnish texts live in the gettext catalogue
``locale/fi/LC_MESSAGES/moska.po`` and its compiled ``moska.mo`` (``scripts/i18n.py``
extracts the marked texts and compiles the catalogue).

Until :func:`use_language` is called the translation is the identity, so a library user,
the engine's own messages (seat-neutral, English, for bots and logs) and every test that
pins an English text see exactly the English of the code. The command line calls it once
per command: ``--lang``, else the config file's ``lang``, else the locale (``LANGUAGE``,
``LC_ALL``, ``LC_MESSAGES``, ``LANG``, the first one set, as gettext reads them).

Imports nothing from the package: every layer that speaks to a person may use it.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from pathlib import Path

DOMAIN = "moska"
LOCALE_DIR = Path(__file__).with_name("locale")
LANGUAGES = ("en", "fi")
"""The languages there are: English (the code's own texts) and Finnish."""
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_translation: gettext.NullTranslations = gettext.NullTranslations()
_language = "en"


def normalize(lang: str) -> str:
    """``fi``, ``fi_FI.UTF-8``, ``FI`` -> ``fi``; ``en_GB``, ``C``, ``POSIX`` -> ``en``;
    anything else is a ``ValueError`` naming the choices (a typo must not silently give
    English)."""
    value = lang.strip().lower().replace("-", "_")
    if value.startswith("fi"):
        return "fi"
    if value.startswith("en") or value.split(".")[0] in ("c", "posix"):
        return "en"
    raise ValueError(f"unknown language {lang!r}: choose one of {', '.join(LANGUAGES)}")


def language_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale asks for: the first of :data:`LOCALE_VARIABLES` that is set
    (``LANGUAGE`` may list several, ``fi:en``: its first counts); Finnish if it starts with
    ``fi``, English otherwise (any other language has no catalogue)."""
    env = os.environ if environ is None else environ
    for key in LOCALE_VARIABLES:
        value = env.get(key, "").split(":")[0].strip()
        if value:
            return "fi" if value.lower().startswith("fi") else "en"
    return "en"


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"


def use_language(lang: str | None = None) -> str:
    """Install ``lang`` (``None``: the locale's, :func:`language_from_env`) for every
    :func:`_` and :func:`ngettext` from now on; returns the language installed."""
    global _translation, _language
    chosen = normalize(lang) if lang else language_from_env()
    if chosen == "en":
        translation = gettext.NullTranslations()
    else:
        with catalogue_path(chosen).open("rb") as file:
            translation = gettext.GNUTranslations(file)
    _translation, _language = translation, chosen
    return chosen


def language() -> str:
    """The language installed (``en`` until :func:`use_language` says otherwise)."""
    return _language


def _(message: str) -> str:
    """``message`` in the language installed (as written, in English)."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a counted message for ``count`` in the language installed."""
    return _translation.ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Marks a text for the catalogue where it is defined (a module constant) and
    translated where it is used, with :func:`_`: a constant is made once, at import,
    before any language is chosen."""
    return message

"""A move's words in the table's language: the log and the legal moves read ``tapa 4H 2C``
at a Finnish table, and what is shown can be typed back (:func:`from_words`).

The notation itself stays RULES C6's (English words, card codes): transcripts, records and
bots use it, and every language's words are read as its aliases. Only the kind's words
change; cards keep their codes (``4H``) or the table's symbols (``4♥``).
"""

from __future__ import annotations

from ..i18n import language

WORDS: dict[str, dict[str, str]] = {
    "fi": {
        "attack deck": "hyökkää pakasta",
        "transfer show": "siirrä näyttäen",
        "attack": "hyökkää",
        "kill": "tapa",
        "take": "nosta",
        "pass": "ohi",
        "exchange": "vaihda",
        "self": "itsetappo",
        "deck-kill": "pakkatappo",
        "transfer": "siirrä",
        "beg": "kerjää",
    },
}
"""Per language, each move kind's words (RULES C6's ``kind_name``) as a person reads them;
the longer kinds first, so ``attack deck`` is not read as ``attack`` and a card."""


def in_words(text: str, lang: str | None = None) -> str:
    """A move's text (``kill 4H 2C``) with its kind in the table's language."""
    words = WORDS.get(lang or language())
    if not words:
        return text
    for kind, said in words.items():
        if text == kind or text.startswith(kind + " "):
            return said + text[len(kind) :]
    return text


def from_words(text: str) -> str:
    """What was typed with a kind in any language's words, in the notation's own
    (``hyökkää pakasta`` -> ``attack deck``); anything else as it is."""
    lowered = text.lstrip().lower()
    for words in WORDS.values():
        for kind, said in words.items():
            if lowered == said or lowered.startswith(said + " "):
                return kind + lowered[len(said) :]
    return text

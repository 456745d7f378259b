"""What a person types, read into a move: RULES C6 notation plus short forms.

People type fast and loosely, so besides the canonical notation (``kill 3H 7H``) this
accepts, case-insensitively, a one-letter verb (``k 3h 7h``), a card's number in the hand as
shown on the table (``k 3h 2``: kill 3H with hand card 2; ``a 1 2``), and a kill that names
one card when only one kill fits it (``k 9c`` when 9C can kill only one table card). What is
not a move gets a :class:`~moska_p2p.engine.MoveSyntaxError` and what is not legal now an
:class:`~moska_p2p.engine.IllegalMove`, each with a one-line reason; nothing is played.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..cards import CARD_TEXT, parse_card
from ..engine import IllegalMove, Move, MoveSyntaxError, View, parse_move
from ..i18n import _, language
from .movewords import from_words
from .reasons import translate
from .render import sort_hand

# Short verbs; the long ones are the notation's own words (RULES C6).
ALIASES = {
    "a": "attack",
    "k": "kill",
    "t": "take",
    "p": "pass",
    "x": "exchange",
    "s": "self",
    "dk": "deck-kill",
    "tr": "transfer",
    "b": "beg",
}
"""The Finnish words of every kind are read too (:mod:`.movewords`, what a Finnish table
shows): the notation stays C6's."""


def expand_verb(text: str) -> str:
    """``text`` with a short verb spelled out (``k 3h`` -> ``kill 3h``); the rest as typed.
    Shared with tab completion, so ``k <Tab>`` offers the kills."""
    stripped = from_words(text.lstrip())  # a kind in the table's words: hyökkää pakasta
    head, sep, rest = stripped.partition(" ")
    word = ALIASES.get(head.lower(), head)
    if word == head and not sep and stripped == text.lstrip():
        return text
    return word + sep + rest


def expand(text: str, hand: Sequence[str]) -> str:
    """The canonical-notation text of what was typed: verb spelled out, hand numbers
    replaced by the cards they stand for (``hand`` in its shown order)."""
    words = expand_verb(text.strip()).replace(",", " ").split()
    if not words:
        raise MoveSyntaxError(_("type a move such as 'kill 3H 7H', 'take' or 'pass' (help)"))
    out = [words[0].lower()]
    for word in words[1:]:
        if word.isascii() and word.isdigit():  # "²" is a digit to Python, not to int()
            number = int(word)
            if not 1 <= number <= len(hand):
                said = (
                    _('"{word}" is not a card of your hand: its cards are numbered 1 to {count}')
                    if hand
                    else _('"{word}" is not a card of your hand: it is empty')
                )
                raise MoveSyntaxError(said.format(word=word, count=len(hand)))
            out.append(hand[number - 1])
        else:
            out.append(word)
    return " ".join(out)


def read_move(text: str, view: View, legal: Sequence[Move]) -> Move:
    """The legal move that ``text`` names, or a ``ValueError`` saying why there is none.

    ``view`` must be the current view of the seat to act (its hand gives the numbers and,
    for the reason of an illegal move, its game is asked)."""
    hand = sort_hand(view.hand, view.trump)
    canonical = expand(text, hand)
    words = canonical.split()
    if words[0] == "kill" and len(words) == 2:
        return _one_card_kill(words[1], legal)
    try:
        move = parse_move(canonical)
    except MoveSyntaxError as error:
        if language() == "en":
            raise
        raise MoveSyntaxError(to_person(str(error), view.seat)) from None
    if move in legal:
        return move
    if move.kind_name == "attack":
        # Attack cards in any order: the engine's legal list has them in canonical order.
        for candidate in legal:
            if candidate.kind_name == "attack" and sorted(candidate.cards) == sorted(move.cards):
                return candidate
    raise IllegalMove(to_person(why_illegal(view, move), view.seat))


def _one_card_kill(word: str, legal: Sequence[Move]) -> Move:
    """``kill C``: the one kill that uses C (from the hand) or kills C (on the table)."""
    try:
        card = parse_card(word)
    except ValueError as error:
        reason = to_person(str(error), -1)
        raise MoveSyntaxError(
            _('"kill {word}" is not a move: {reason}').format(word=word, reason=reason)
        ) from None
    kills = [m for m in legal if m.kind_name == "kill" and card in m.cards]
    if len(kills) == 1:
        return kills[0]
    name = CARD_TEXT[card]
    if not kills:
        raise IllegalMove(
            _("no kill with {card} is legal now (kill ATTACK_CARD KILLING_CARD)").format(card=name)
        )
    options = _(" or ").join(str(m) for m in kills[:4])
    more = _(" or ...") if len(kills) > 4 else ""
    raise IllegalMove(
        _("kill {card} fits several cards: say which, e.g. {options}{more}").format(
            card=name, options=options, more=more
        )
    )


def why_illegal(view: View, move: Move) -> str:
    """The engine's own reason why ``move`` is not legal now: it is tried on the game as
    this seat knows it (:meth:`View.masked_game`, a fresh copy: nothing real changes)."""
    try:
        view.masked_game().play(move, seat=view.seat)
    except ValueError as error:
        return str(error)
    return _("{move} is not a legal move now (moves: lists them)").format(move=move)


# Third-person verbs of the engine's texts and their forms after "you".
_VERBS = {"is": "are", "does": "do", "has": "have", "was": "were", "holds": "hold"}
_MODALS = {"must", "may", "can", "cannot", "could", "already", "will", "would", "should"}


def to_person(text: str, seat: int) -> str:
    """An engine reason as said to the person at ``seat``: in English :func:`personal`;
    in another language its translation (:mod:`.reasons`), or the English if none fits."""
    if language() != "en":
        said = translate(text, seat)
        if said is not None:
            return said
    return personal(text, seat)


def personal(text: str, seat: int) -> str:
    """``text`` (an engine message, seat-neutral for bots and logs) as said to the person
    at ``seat``: "seat 0 must open the bout" -> "you must open the bout", "seat 0's" ->
    "your", "does" -> "do", "itself" -> "yourself". Other seats keep their numbers."""
    pattern = re.compile(rf"\bseat {seat}\b('s\b)?( [a-z]+\b)?")

    def you(match: re.Match[str]) -> str:
        if match.group(1):
            return "your" + (match.group(2) or "")
        word = (match.group(2) or "").strip()
        if not word:
            return "you"
        if word in _VERBS:
            word = _VERBS[word]
        elif word in _MODALS:
            pass
        elif word.endswith(("sses", "shes", "ches", "xes")):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        return f"you {word}"

    said, count = pattern.subn(you, text)
    return said.replace(" itself", " yourself") if count else said

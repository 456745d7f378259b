"""The engine's reasons, said to a person in the language installed (:mod:`moska_p2p.i18n`).

The engine's error texts stay English and seat-neutral (``seat 0 must open the bout``): bots,
logs and verdicts read them. A person reads them at the UI edge, so they are translated here:
each text the engine can give is matched by one pattern of :data:`PATTERNS` and rebuilt from
its template (a catalogue message, so the Finnish lives in the ``.po`` like every other text)
with the pieces the pattern captured. A captured seat becomes "you" for the person's own seat
(``{seat}``, and the genitive ``{seats}``: "your", "sinun") and "seat N" otherwise; captured
clauses (what a seat must do, a card's syntax error) are translated by the same patterns.

In English nothing here is used: :func:`.shorthand.personal` says the engine's text to "you"
as it always did. A text no pattern knows is said in English rather than not at all (a test
checks that every text the engine and the move parser can give a person has a pattern).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..i18n import N_, _

_CARD = r"(?P<card>\S+)"
_SEAT = r"seat (?P<seat>\d+)"


@dataclass(frozen=True)
class Reason:
    """One engine text: its pattern, the template it is rebuilt from, and examples of it
    (for the tests: each must match its own pattern and no earlier one; a clause, a piece
    of other texts, has none)."""

    pattern: re.Pattern[str]
    template: str
    examples: tuple[str, ...]


def _r(pattern: str, template: str, *examples: str) -> Reason:
    return Reason(re.compile(f"^{pattern}$"), template, tuple(e for e in examples if e))


PATTERNS: tuple[Reason, ...] = (
    # engine/play.py: whose move it is, and what the seat to act must do (C5)
    _r(r"the game is over", N_("the game is over"), "the game is over"),
    _r(
        r"the game waits for a card to be revealed; no move is possible",
        N_("the game waits for a card to be revealed; no move is possible"),
        "the game waits for a card to be revealed; no move is possible",
    ),
    _r(
        rf"{_SEAT} may not move: it is seat (?P<other>\d+)'s (?P<decision>\S+)",
        N_("{seat} may not move: it is {others} turn ({decision})"),
        "seat 0 may not move: it is seat 2's defend",
    ),
    _r(r"unknown move (?P<move>.+)", N_("unknown move {move}"), "unknown move attack 3H"),
    _r(
        rf"{_SEAT} does not hold {_CARD}, the low trump \(M4, D8\)",
        N_("{seat} does not hold {card}, the low trump (M4, D8)"),
        "seat 0 does not hold 2S, the low trump (M4, D8)",
    ),
    _r(
        rf"{_SEAT} does not hold (?P<cards>.+)",
        N_("{seat} does not hold {cards}"),
        "seat 0 does not hold 7H 9H",
    ),
    _r(
        rf"(?P<what>\S+(?: deck| show)?) is not possible now: {_SEAT} must (?P<expected>.+)",
        N_("{what} is not possible now: {seat} must {expected}"),
        "take is not possible now: seat 0 must open the bout with an attack",
    ),
    _r(r"open the bout with an attack", N_("open the bout with an attack"), ""),
    _r(r"defend: kill a live card or take", N_("defend: kill a live card or take"), ""),
    _r(
        rf"kill a live card with {_CARD}, turned from the stock \(M22\)",
        N_("kill a live card with {card}, turned from the stock (M22)"),
        "",
    ),
    _r(r"self-execute or pass \(M20\)", N_("self-execute or pass (M20)"), ""),
    _r(
        r"throw in cards of the bout's ranks or pass",
        N_("throw in cards of the bout's ranks or pass"),
        "",
    ),
    _r(
        r"give cards of the bout's ranks to the defender or pass",
        N_("give cards of the bout's ranks to the defender or pass"),
        "",
    ),
    _r(r"answer exchange or pass \(M4\)", N_("answer exchange or pass (M4)"), ""),
    _r(
        r"attack the dealer with twos or pass \(K1\)",
        N_("attack the dealer with twos or pass (K1)"),
        "",
    ),
    _r(r"wait", N_("wait"), ""),
    # kills (C3, M9, M22)
    _r(
        rf"the card turned from the stock, {_CARD}, must kill \(M22\)",
        N_("the card turned from the stock, {card}, must kill (M22)"),
        "the card turned from the stock, 9S, must kill (M22)",
    ),
    _r(
        rf"{_CARD} is not a live attack card on the table",
        N_("{card} is not a live attack card on the table"),
        "3H is not a live attack card on the table",
    ),
    _r(
        rf"{_CARD} does not beat (?P<attack>\S+) \(C3\)",
        N_("{card} does not beat {attack} (C3)"),
        "5H does not beat 9H (C3)",
    ),
    # passing (C5, M9)
    _r(
        rf"{_SEAT} opens the bout and may not pass \(C5\)",
        N_("{seat} opens the bout and may not pass (C5)"),
        "seat 0 opens the bout and may not pass (C5)",
    ),
    _r(
        rf"{_SEAT} defends against live cards and may not pass: kill or take \(M9\)",
        N_("{seat} defends against live cards and may not pass: kill or take (M9)"),
        "seat 0 defends against live cards and may not pass: kill or take (M9)",
    ),
    # the trump exchange (M4, D8)
    _r(
        r"Mustamaija has no trump exchange",
        N_("Mustamaija has no trump exchange"),
        "Mustamaija has no trump exchange",
    ),
    _r(
        r"this table plays without trump exchange \(trump_exchange=never\)",
        N_("this table plays without trump exchange (trump_exchange=never)"),
        "this table plays without trump exchange (trump_exchange=never)",
    ),
    _r(
        r"the trump may be exchanged only before the first attack \(M4\)",
        N_("the trump may be exchanged only before the first attack (M4)"),
        "the trump may be exchanged only before the first attack (M4)",
    ),
    _r(
        r"the trump indicator is no longer in the stock to exchange \(M4\)",
        N_("the trump indicator is no longer in the stock to exchange (M4)"),
        "the trump indicator is no longer in the stock to exchange (M4)",
    ),
    _r(
        rf"{_CARD} was picked up, so it buys no exchange \(D8\)",
        N_("{card} was picked up, so it buys no exchange (D8)"),
        "6D was picked up, so it buys no exchange (D8)",
    ),
    # attacks (M6, M7, M10, M12, D4, D5, MM3, K1)
    _r(
        r"an attack names a card twice",
        N_("an attack names a card twice"),
        "an attack names a card twice",
    ),
    _r(
        rf"{_SEAT} is the defender and may not attack itself \(only self execution, M20\)",
        N_("{seat} is the defender and may not attack itself (only self execution, M20)"),
        "seat 0 is the defender and may not attack itself (only self execution, M20)",
    ),
    _r(
        r"only twos may be laid against the dealer now \(K1\)",
        N_("only twos may be laid against the dealer now (K1)"),
        "only twos may be laid against the dealer now (K1)",
    ),
    _r(
        r"the bout's limit allows (?P<count>-?\d+) more cards? \((?P<ids>[A-Z0-9, ]+)\)",
        N_("the bout's limit allows {count} more cards ({ids})"),
        "the bout's limit allows 1 more card (M6, D5)",
        "the bout's limit allows 2 more cards (M6)",
    ),
    _r(
        r"a Durak bout opens with exactly one card \(D4\)",
        N_("a Durak bout opens with exactly one card (D4)"),
        "a Durak bout opens with exactly one card (D4)",
    ),
    _r(
        r"this opening has (?P<count>\d+) cards but the limit allows (?P<room>\d+) \(M6, MM3\)",
        N_("this opening has {count} cards but the limit allows {room} (M6, MM3)"),
        "this opening has 4 cards but the limit allows 3 (M6, MM3)",
    ),
    _r(
        r"an attack is one or more cards of a single suit \(MM3\)",
        N_("an attack is one or more cards of a single suit (MM3)"),
        "an attack is one or more cards of a single suit (MM3)",
    ),
    _r(
        r"an opening of several cards must be groups of two or more cards of equal rank"
        rf" \(M7\); {_CARD} is alone",
        N_(
            "an opening of several cards must be groups of two or more cards of equal rank"
            " (M7); {card} is alone"
        ),
        "an opening of several cards must be groups of two or more cards of equal rank (M7);"
        " 9C is alone",
    ),
    _r(
        rf"{_CARD}: its rank was not among the attack cards played in this bout"
        r" \(M10, M12, D4\)",
        N_("{card}: its rank was not among the attack cards played in this bout (M10, M12, D4)"),
        "QS: its rank was not among the attack cards played in this bout (M10, M12, D4)",
    ),
    _r(
        rf"{_CARD}: its rank was not among the cards played in this bout \(M10, M12, D4\)",
        N_("{card}: its rank was not among the cards played in this bout (M10, M12, D4)"),
        "QS: its rank was not among the cards played in this bout (M10, M12, D4)",
    ),
    # self execution (M20, K5)
    _r(
        r"in Kaavi only the dealer, defending against live cards, kills its own twos \(K5\)",
        N_("in Kaavi only the dealer, defending against live cards, kills its own twos (K5)"),
        "in Kaavi only the dealer, defending against live cards, kills its own twos (K5)",
    ),
    _r(
        r"the dealer's own twos need two cards in the stock \(K5\)",
        N_("the dealer's own twos need two cards in the stock (K5)"),
        "the dealer's own twos need two cards in the stock (K5)",
    ),
    _r(
        r"this table plays without self execution \(M20\)",
        N_("this table plays without self execution (M20)"),
        "this table plays without self execution (M20)",
    ),
    _r(
        rf"{_CARD}: its rank was not among the attack cards in this bout \(M20\)",
        N_("{card}: its rank was not among the attack cards in this bout (M20)"),
        "8S: its rank was not among the attack cards in this bout (M20)",
    ),
    _r(
        rf"{_CARD}: its rank was not played in this bout \(M20\)",
        N_("{card}: its rank was not played in this bout (M20)"),
        "8S: its rank was not played in this bout (M20)",
    ),
    _r(
        r"the bout's limit leaves no room for a self execution \(M20\)",
        N_("the bout's limit leaves no room for a self execution (M20)"),
        "the bout's limit leaves no room for a self execution (M20)",
    ),
    # the stock (M7, M22)
    _r(
        r"the stock is empty: attack deck is not possible \(M7\)",
        N_("the stock is empty: attack deck is not possible (M7)"),
        "the stock is empty: attack deck is not possible (M7)",
    ),
    _r(
        r"the stock is empty: deck-kill is not possible \(M22\)",
        N_("the stock is empty: deck-kill is not possible (M22)"),
        "the stock is empty: deck-kill is not possible (M22)",
    ),
    # transfers (D11)
    _r(
        r"a transfer needs every attack card of one rank and none beaten yet \(D11\)",
        N_("a transfer needs every attack card of one rank and none beaten yet (D11)"),
        "a transfer needs every attack card of one rank and none beaten yet (D11)",
    ),
    _r(
        rf"{_CARD} is not of the attack's rank \(D11\)",
        N_("{card} is not of the attack's rank (D11)"),
        "7C is not of the attack's rank (D11)",
    ),
    _r(
        rf"{_SEAT} could face at most (?P<count>\d+) cards \(D11\)",
        N_("{seat} could face at most {count} cards (D11)"),
        "seat 2 could face at most 1 cards (D11)",
    ),
    _r(
        r"this table plays without transfer by showing a trump \(D11\)",
        N_("this table plays without transfer by showing a trump (D11)"),
        "this table plays without transfer by showing a trump (D11)",
    ),
    _r(
        rf"{_CARD} is not a trump \(D11\)",
        N_("{card} is not a trump (D11)"),
        "7D is not a trump (D11)",
    ),
    _r(
        rf"{_SEAT} already transferred by showing this bout \(D11\)",
        N_("{seat} already transferred by showing this bout (D11)"),
        "seat 0 already transferred by showing this bout (D11)",
    ),
    # begging (K4)
    _r(rf"{_CARD} is not on the table", N_("{card} is not on the table"), "3H is not on the table"),
    _r(
        rf"{_CARD} is not killed yet: kill it instead \(K4\)",
        N_("{card} is not killed yet: kill it instead (K4)"),
        "3H is not killed yet: kill it instead (K4)",
    ),
    _r(
        rf"{_CARD} is the dealer's own two, not an attack card \(K4\)",
        N_("{card} is the dealer's own two, not an attack card (K4)"),
        "2H is the dealer's own two, not an attack card (K4)",
    ),
    _r(
        rf"the killer of {_CARD} was already exchanged once \(K4\)",
        N_("the killer of {card} was already exchanged once (K4)"),
        "the killer of 3H was already exchanged once (K4)",
    ),
    # engine/movegen.py
    _r(
        rf"{_SEAT}'s hand holds cards this engine cannot see",
        N_("{seats} hand holds cards this engine cannot see"),
        "seat 0's hand holds cards this engine cannot see",
    ),
    # engine/moves.py: the notation (C6)
    _r(
        r"empty move: type a move such as 'kill 3H 7H', 'take' or 'pass'",
        N_("empty move: type a move such as 'kill 3H 7H', 'take' or 'pass'"),
        "empty move: type a move such as 'kill 3H 7H', 'take' or 'pass'",
    ),
    _r(
        r'"(?P<text>.+)" is not a move: unknown word "(?P<word>.+)" \((?P<words>.+)\)',
        N_('"{text}" is not a move: unknown word "{word}" ({words})'),
        '"hit 3H" is not a move: unknown word "hit" (attack, kill, take)',
    ),
    _r(
        r'"(?P<text>.+)" is not a move: (?P<kind>\S+) takes (?P<count>\d+) cards?'
        r" \((?P<usage>.+)\)",
        N_('"{text}" is not a move: {kind} takes {count} cards ({usage})'),
        '"kill 3H" is not a move: kill takes 2 cards (kill ATTACK_CARD KILLING_CARD)',
    ),
    _r(
        r'"(?P<text>.+)" is not a move: (?P<error>.+)',
        N_('"{text}" is not a move: {error}'),
        '"kill 3X 7H" is not a move: "3X" is not a card: unknown suit "X" (suits are C D H S)',
    ),
    _r(
        r'"(?P<text>.+)" names no card: write (?P<usage>.+)',
        N_('"{text}" names no card: write {usage}'),
        '"attack" names no card: write attack CARD [CARD ...]',
    ),
    _r(
        r'"(?P<text>.+)" names a card twice',
        N_('"{text}" names a card twice'),
        '"attack 3H 3H" names a card twice',
    ),
    _r(
        r'"(?P<text>.+)" names the same card twice',
        N_('"{text}" names the same card twice'),
        '"kill 3H 3H" names the same card twice',
    ),
    # cards.py: a card's text (C1), inside the notation's errors
    _r(
        r'"(?P<text>.*)" is not a card: write a rank then a suit, like 10H or QS',
        N_('"{text}" is not a card: write a rank then a suit, like 10H or QS'),
        '"X" is not a card: write a rank then a suit, like 10H or QS',
    ),
    _r(
        r'"(?P<text>.*)" is not a card: unknown rank "(?P<rank>.*)" and suit "(?P<suit>.*)"'
        r" \(ranks 2-10 J Q K A, suits C D H S\)",
        N_(
            '"{text}" is not a card: unknown rank "{rank}" and suit "{suit}"'
            " (ranks 2-10 J Q K A, suits C D H S)"
        ),
        '"1X" is not a card: unknown rank "1" and suit "X" (ranks 2-10 J Q K A, suits C D H S)',
    ),
    _r(
        r'"(?P<text>.*)" is not a card: unknown suit "(?P<suit>.*)" \(suits are C D H S\)',
        N_('"{text}" is not a card: unknown suit "{suit}" (suits are C D H S)'),
        '"3X" is not a card: unknown suit "X" (suits are C D H S)',
    ),
    _r(
        r'"(?P<text>.*)" is not a card: unknown rank "(?P<rank>.*)" \(ranks are 2-10, J, Q, K, A\)',
        N_('"{text}" is not a card: unknown rank "{rank}" (ranks are 2-10, J, Q, K, A)'),
        '"1H" is not a card: unknown rank "1" (ranks are 2-10, J, Q, K, A)',
    ),
)
"""Every text the engine and the notation give a person, most specific first."""

_CLAUSES = ("expected", "error")
"""Captured pieces that are texts of their own, translated by the same patterns."""


def _seat(number: int, person: int) -> tuple[str, str]:
    """A seat as the subject and in the genitive: "you"/"your", or "seat 2"/"seat 2's"."""
    if number == person:
        return _("you"), _("your")
    return _("seat {seat}").format(seat=number), _("seat {seat}'s").format(seat=number)


def match(text: str) -> tuple[Reason, dict[str, str]] | None:
    """The first pattern that matches ``text`` whole, and what it captured."""
    for reason in PATTERNS:
        found = reason.pattern.match(text)
        if found:
            return reason, found.groupdict()
    return None


def translate(text: str, seat: int) -> str | None:
    """``text`` (an engine reason) said to the person at ``seat`` in the language
    installed, or ``None`` if no pattern knows it."""
    found = match(text)
    if found is None:
        return None
    reason, groups = found
    values: dict[str, str] = {key: value for key, value in groups.items() if value is not None}
    for key in _CLAUSES:
        if key in values:
            values[key] = translate(values[key], seat) or values[key]
    if "seat" in values:
        values["seat"], values["seats"] = _seat(int(values["seat"]), seat)
    if "other" in values:
        values["other"], values["others"] = _seat(int(values["other"]), seat)
    return _(reason.template).format(**values)

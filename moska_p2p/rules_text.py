"""The rules of each preset in brief, for ``moska rules PRESET`` and the table's ``rules``.

Each summary cites the rule ids of the project's rules specification, ``docs/RULES.md`` (it
ships with the project), so a player who wants the full text knows where to look; the moves
listed are only those the preset (with its options) has, from :func:`move_kinds`. Lines fit
78 columns, so the text reads on an 80-column terminal.
"""

from __future__ import annotations

import textwrap

from .engine import Rules, make_rules
from .i18n import N_, _

RULES_DOCUMENT = "docs/RULES.md"
"""Where the full rules are, in the project's repository (the ids cited are defined there)."""

WIDTH = 78

# One example of each move kind in the rules' notation (RULES C6), in C6's table order.
MOVE_EXAMPLES: dict[str, str] = {
    "attack": "attack 3H 3S",
    "attack deck": "attack deck",
    "kill": "kill 3H 7H",
    "take": "take",
    "pass": "pass",
    "exchange": "exchange",
    "self": "self 8S 9S",
    "deck-kill": "deck-kill",
    "transfer": "transfer 7C",
    "transfer show": "transfer show 7D",
    "beg": "beg 3H 9H",
}


def move_kinds(rules: Rules) -> list[str]:
    """The kinds of move (``Move.kind_name``) that exist at all under ``rules``.

    Mustamaija has no ``pass`` (nobody throws in, the bout ends by itself: MM1, MM5) and no
    exchange; ``attack deck`` is Moska's (M7); ``self`` needs M20 or Kaavi's K5; ``beg`` is
    K4; the transfers are D11's. A test plays random games of every preset and checks this
    against the engine's own legal moves."""
    family = rules.family
    kinds = ["attack"]
    if family in ("moska", "kaavi"):
        kinds.append("attack deck")
    kinds += ["kill", "take"]
    if family != "mustamaija":
        kinds.append("pass")
        if rules.trump_exchange != "never":
            kinds.append("exchange")
    if rules.self_execution != "off" or family == "kaavi":
        kinds.append("self")
    if rules.deck_kill == "on":
        kinds.append("deck-kill")
    if rules.transfer:
        kinds.append("transfer")
        if rules.transfer_show_trump == "on":
            kinds.append("transfer show")
    if family == "kaavi":
        kinds.append("beg")
    return kinds


def notation(rules: Rules) -> str:
    """The moves of ``rules`` in the notation (C6), wrapped to :data:`WIDTH`."""
    # No-break spaces inside each example, so a move is never split over two lines.
    moves = " | ".join(MOVE_EXAMPLES[kind].replace(" ", "\xa0") for kind in move_kinds(rules))
    text = textwrap.fill(
        _("Moves: {moves}   (C6)").format(moves=moves),
        WIDTH,
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    return text.replace("\xa0", " ")


MOSKA = N_("""Moska (seed: Moska as taught in Tampere)
- 52 cards, 2-6 players, hands of 6 (M1). The dealer's left attacks its left (M5).
- The trump indicator lies face up under the stock and is drawn last (M3). The holder of the
  2 of trumps may exchange it for the indicator (M4).
- Opening: one card, the top card of the stock (attack deck), or groups of two or more cards
  of equal rank (M7). At most L = min(6, defender's hand) attack cards per bout (M6).
- Non-defenders refill to 6 at once after laying cards (M8). The defender kills live cards
  one at a time with a higher card of the suit or any trump, or takes (M9).
- With no live card on the table, the attackers may throw in cards of ranks played in the
  bout, the principal attacker first, then clockwise from the defender's left (M10, C7).
- Beaten off: the table is discarded and the defender attacks next (M11). Taken: killed pairs
  are discarded, the others may give more cards of played ranks, the defender picks up the
  live cards and is skipped (M12).
- With the stock empty, empty hands are out; the last player holding cards loses (M13).""")

EXTRA = {
    "limit=hand": N_("Turamoska: no cap of six; cards may be laid while the live cards are no "
    "more than the defender's hand (M6)."),
    "limit=none": N_("Pyhaselka: no count limit at all; only the ranks limit the attack (M6)."),
    "throw_in_ranks=attack-only": N_("Only ranks of attack cards may be thrown in or given, "
    "never ranks of killing cards (M10, M12, M20)."),
    "trump_exchange=before-first-attack": N_("The trump may be exchanged only in a round before "
    "the first attack: every seat answers exchange or pass (M4)."),
    "trump_exchange=never": N_("No trump exchange (M4)."),
    "self_execution=on": N_("Self execution: the defender may lay a card of a played rank and "
    "kill it with its own card: 'self A K'; it counts two cards against the limit (M20)."),
    "self_execution=on-with-draw": N_("Self execution (M20), and the defender draws a card after "
    "each one (M21)."),
    "deck_kill=on": N_("Killing from the stock: 'deck-kill' turns the top stock card; if it beats "
    "a live card it must kill one, else the defender has taken it (M22)."),
    "expose_second_last=on": N_("With two cards left in the stock the upper one is turned face "
    "up (M23)."),
    "first_bout_limit=5": N_("The first bout of a game has at most 5 attack cards (D5)."),
    "transfer_show_trump=on": N_("A defender may also transfer by showing a trump of the attack's "
    "rank, once per bout (D11)."),
}

KAAVI = N_("""Kaavi Moska (seed: Kaavin moska)
- Moska with these changes. No trump at the deal: the others attack the dealer with twos
  first, the dealer's right first, each laying one or more twos or passing; nobody draws (K1).
- Then the top stock card becomes the trump indicator; those who laid twos refill; the
  dealer defends against the twos, or opens against its left if nobody laid any (K2).
- Whenever the dealer defends, twos may always be thrown in or given, and openings against
  the dealer may carry any number of extra twos (K3).
- Begging: the defender may take back the killer of an attack card and kill it with another
  card from hand: 'beg A K', once per attack card (K4).
- Whenever the dealer defends it may kill its own twos, 'self 2X K', if the stock holds at
  least two cards; it then draws two cards; this does not count against the limit (K5).""")

DURAK = N_("""Durak (Podkidnoy)
- 36 cards (6 to A), 2-6 players, hands of 6 (D1); durak-52 uses all 52 cards. With 6
  players and 36 cards the dealer's last card is the trump and stays in its hand (D2).
- First game: the holder of the lowest trump attacks first and shows it (D3).
- The opening is one card; with no live card on the table the attackers may throw in cards
  of ranks on the table (D4). At most 6 attack cards, and no more than the defender held
  when the bout opened (D5).
- The defender beats cards one at a time or takes; after a take the others may give more,
  then the defender takes every card on the table (D6).
- Refill at the bout's end: the principal attacker, the others clockwise, the defender
  last (D7). The lowest trump buys the indicator while the stock lasts (D8).
- A defender who held attacks next; one who took is skipped (D9). The last player holding
  cards is the fool; nobody holding cards is a draw (D10).""")

PEREVODNOY = N_("""- Perevodnoy: before any card is beaten, if every attack card has one rank, the
  defender may pass the attack on by laying a card of that rank: 'transfer 7C' (D11).""")

TEAMS = N_("""- Team Durak: 4 players in 2 teams or 6 in 2 teams of 3, seated alternately. Nobody
  attacks or throws in against a partner; the last team holding cards loses (D12).""")

MUSTAMAIJA = N_("""Mustamaija
- 52 cards, 2-6 players, hands of 5; nobody else throws in (MM1).
- No trump at the deal: right after the first attack the top stock card is turned; spades
  are buried at the bottom until a non-spade is turned: that is the trump, drawn last (MM2).
- An attack is one or more cards of a single suit; with the stock empty, at most the
  defender's hand (MM3). The queen of spades beats nothing and nothing beats it (MM4).
- The attacker refills to 5 at once; the defender covers cards one at a time or takes the
  rest; covered pairs are discarded and the defender refills (MM5).
- All covered: the defender attacks next; else its left does (MM6). With the stock empty,
  empty hands leave; the last player holding cards loses (MM7).""")


def _wrap(body: str) -> str:
    """``body``'s bullets (``- `` lines and their indented continuations) filled to
    :data:`WIDTH`; other lines as they are."""
    items: list[str] = []
    for line in body.splitlines():
        if line.startswith("  ") and items and items[-1].startswith("- "):
            items[-1] += " " + line.strip()
        else:
            items.append(line)
    return "\n".join(
        textwrap.fill(item, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
        if item.startswith("- ")
        else item
        for item in items
    )


def rules_text(preset: str) -> str:
    """The rules of ``preset`` in brief (its option values included), naming the document
    that defines every rule id it cites."""
    rules = make_rules(preset)
    if rules.family == "kaavi":
        body = _(KAAVI) + "\n\n" + _("Everything else as in Moska:") + "\n" + _(MOSKA)
    elif rules.family == "durak":
        body = _(DURAK)
        if rules.transfer:
            body += "\n" + _(PEREVODNOY)
        if rules.teams:
            body += "\n" + _(TEAMS)
    elif rules.family == "mustamaija":
        body = _(MUSTAMAIJA)
    else:
        body = _(MOSKA)
    notes = []
    for name, value in rules.options().items():
        note = EXTRA.get(f"{name}={value}")
        if note:
            notes.append(textwrap.fill(_(note), WIDTH, initial_indent="- ", subsequent_indent="  "))
    options = textwrap.fill(
        ", ".join(f"{k}={v}" for k, v in rules.options().items()) or _("none"),
        WIDTH,
        initial_indent=_("Options:") + " ",
        subsequent_indent="  ",
    )
    parts = [f"{preset}", "", _wrap(body)]
    if notes:
        parts += ["", _("This preset:"), *notes]
    parts += [
        "",
        options,
        "",
        notation(rules),
        "",
        textwrap.fill(
            _(
                "The ids in brackets (M7, D4, MM4...) are rules of {document}, the full"
                " rules, in the moska-p2p repository."
            ).format(document=RULES_DOCUMENT),
            WIDTH,
        ),
    ]
    return "\n".join(parts)

"""The table as text: one pure function from a :class:`~moska_p2p.engine.View` to lines.

Kept free of I/O so that what a person sees is testable (width, colour, roles, pairs) and so
that the local game, a network game and a replay all draw the same table. The layout fits a
plain 80x24 terminal: at most ``height`` lines (20 by default, leaving room for a status
line, the legal moves and the prompt) of at most ``width`` visible columns.

Colour is ANSI SGR only (red for ♦ ♥, bold for trumps) and is off when ``NO_COLOR`` is set
(https://no-color.org) or the output is not a terminal; the suit symbols fall back to letters
where the output cannot encode them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TextIO

from ..cards import CARD_TEXT, SUIT_SYMBOLS, SUITS, parse_card
from ..engine import View
from ..i18n import N_, _, ngettext
from .movewords import in_words

RESET = "\x1b[0m"
RED = "31"
BOLD = "1"
DIM = "2"
REVERSE = "7"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Non-trump suits in alternating colours (♣ ♦ ♠ ♥), the trump suit last: how people hold
# cards, so the numbers of the sorted hand read like a real hand.
_SUIT_ORDER = (0, 1, 3, 2)

DECISION_WORDS = {
    "open": N_("to open a bout"),
    "defend": N_("to defend"),
    "throw-in": N_("may throw in"),
    "give": N_("may give more"),
    "exchange-or-pass": N_("may exchange the trump"),
    "twos": N_("to play twos"),
    "waiting": N_("waiting for a card"),
}


WAIT_DECISIONS = {
    "open": N_("to attack"),
    "defend": N_("to defend"),
    "throw-in": N_("to throw in or pass"),
    "give": N_("to give more or pass"),
    "exchange-or-pass": N_("to exchange the trump or pass"),
    "twos": N_("to play twos"),
}
"""What the seat on move is waited for to do, by its decision (C5)."""


class TableWait(Protocol):
    """What the table waits for (the network's ``TableWait``, read here by its fields: the
    screen sits above the network and does not import it)."""

    @property
    def stage(self) -> str: ...
    @property
    def seats(self) -> tuple[int, ...]: ...
    @property
    def names(self) -> tuple[str, ...]: ...
    @property
    def unreachable(self) -> tuple[bool, ...]: ...
    @property
    def left(self) -> float: ...
    @property
    def through(self) -> tuple[tuple[int, int], ...]: ...
    @property
    def cut_off(self) -> tuple[tuple[int, float], ...]: ...


def seconds_text(seconds: float) -> str:
    """``45 s`` or ``4:05``: a countdown a person reads at a glance."""
    whole = max(0, math.ceil(seconds))
    return f"{whole} s" if whole < 90 else f"{whole // 60}:{whole % 60:02d}"


def wait_text(
    wait: TableWait, names: Sequence[str], view: View | None = None, *, left: float | None = None
) -> str:
    """What the table waits for, in words: "waiting for bob to attack (4:32 left)", "dealing:
    seat 2's shuffle", "bob is not answering: the game waits 45 s for them" (its contact clock,
    PROTOCOL.md §15.1), then where frames come from when a link is down: "bob's frames come
    through cy" (the others relay them, §8.3), or that nothing reaches this peer from a seat
    at all: "no connection to bob, last heard 12 s ago" (its link closed: a crash, a lost
    network), long before its contact clock would say so.
    ``names`` are the seats' names; ``view`` the game now (what the seat on move must do);
    ``left`` the seconds left, counted by the caller (else the wait's own)."""
    parts = [_waiting_words(wait, names, view, left)]
    for seat, silent in wait.cut_off:
        parts.append(
            _("no connection to {name}, last heard {time} ago").format(
                name=_seat_name(names, seat), time=seconds_text(silent)
            )
        )
    for seat, via in wait.through:
        parts.append(
            _("{name}'s frames come through {via}").format(
                name=_seat_name(names, seat), via=_seat_name(names, via)
            )
        )
    return "; ".join(part for part in parts if part)


def _seat_name(names: Sequence[str], seat: int) -> str:
    if 0 <= seat < len(names):
        return names[seat]
    return _("seat {seat}").format(seat=seat) if seat >= 0 else _("a player")


def _waiting_words(
    wait: TableWait, names: Sequence[str], view: View | None, left: float | None
) -> str:
    decision = view.decision if view is not None and wait.seats == (view.to_act,) else None

    def name(index: int) -> str:
        seat = wait.seats[index]
        if 0 <= seat < len(names):
            return names[seat]
        return wait.names[index] or _seat_name(names, seat)

    everyone = [name(i) for i in range(len(wait.seats))]
    gone = [name(i) for i in range(len(wait.seats)) if wait.unreachable[i]]
    remaining = seconds_text(wait.left if left is None else left)
    if gone:
        return ngettext(
            "{names} is not answering: the game waits {left} for them",
            "{names} are not answering: the game waits {left} for them",
            len(gone),
        ).format(names=", ".join(gone), left=remaining)
    who = ", ".join(everyone)
    if wait.stage in ("hello", "seat"):
        text = _("seating: waiting for {names}").format(names=who) if who else _("seating")
    elif wait.stage in ("shuffle1", "shuffle2"):
        if who and wait.seats[0] >= 0:
            text = _("dealing: {name}'s shuffle (seat {seat})").format(
                name=everyone[0], seat=wait.seats[0]
            )
        else:
            text = _("dealing: checking the shuffles")
    elif wait.stage == "play":
        if not who:
            return ""
        doing = WAIT_DECISIONS.get(decision or "")
        if doing and len(everyone) == 1:
            text = _("waiting for {name} {doing}").format(name=who, doing=_(doing))
        else:
            text = _("waiting for {names}").format(names=who)
    elif wait.stage in ("disclose", "result"):
        text = _("the end: waiting for {names}").format(names=who) if who else _("the end")
    else:
        return ""
    return text + " " + _("({left} left)").format(left=remaining) if who else text


def black_maija_text(preset: str, losers: Sequence[str], symbols: bool = True) -> str:
    """Mustamaija's end in words: the loser holds the Q♠, which never leaves play (nothing
    beats it, MM4), so the last player with cards (MM7) holds it; "" for other games."""
    if preset != "mustamaija" or not losers:
        return ""
    return _("{names} holds the {card}, the Black Maija: nothing beats it (MM4), and the last"
             " player holding cards loses (MM7).").format(
        names=", ".join(losers), card=card_face("QS", Style(symbols=symbols))
    )  # fmt: skip


def turn_text(view: View, names: Sequence[str], *, watching: bool = False) -> str:
    """Whom a game at this terminal waits for when it is not this seat's move (a bot
    thinking, or paced): "waiting for greedy 1 to defend"; "" on this seat's move.
    ``watching``: nobody here plays a seat (``play --watch``), every seat is waited for."""
    seat = view.to_act
    mine = seat == view.seat and not watching
    if seat is None or seat < 0 or mine or view.decision == "over":
        return ""
    name = names[seat] if seat < len(names) else _("seat {seat}").format(seat=seat)
    doing = WAIT_DECISIONS.get(view.decision)
    if doing is None:
        return _("waiting for {names}").format(names=name)
    return _("waiting for {name} {doing}").format(name=name, doing=_(doing))


def color_wanted(stream: TextIO | None = None) -> bool:
    """Colour unless ``NO_COLOR`` is set to anything non-empty, or ``stream`` (when given)
    is not a terminal: escape codes in a file or a pipe are noise."""
    if os.environ.get("NO_COLOR"):
        return False
    if stream is None:
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def symbols_wanted(stream: TextIO | None = None) -> bool:
    """Suit symbols unless the stream's encoding cannot write them (a C locale)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        "♣♦♥♠─▶·…".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def visible_width(text: str) -> int:
    """Columns a line takes on screen: escape codes take none (suit symbols take one)."""
    return len(ANSI.sub("", text))


@dataclass(frozen=True)
class Style:
    """How to draw: with colour, and with suit symbols or letters."""

    color: bool = True
    symbols: bool = True

    @property
    def rule_char(self) -> str:
        return "─" if self.symbols else "-"

    @property
    def ellipsis(self) -> str:
        return "…" if self.symbols else "~"

    @property
    def dot(self) -> str:
        return "·" if self.symbols else "."

    @property
    def pointer(self) -> str:
        return "▶" if self.symbols else ">"


class _Line:
    """A line as spans of (text, SGR code): its width is known before colour is added, so
    lines are cut to the terminal's width without ever splitting an escape sequence."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str]] = []

    def add(self, text: str, sgr: str = "") -> _Line:
        if text:
            self.spans.append((text, sgr))
        return self

    @property
    def width(self) -> int:
        return sum(len(text) for text, _ in self.spans)

    def pad(self, column: int) -> _Line:
        """Spaces up to ``column`` (at least one if the line already reaches it)."""
        return self.add(" " * max(1, column - self.width) if self.spans else " " * column)

    def text(self, style: Style, width: int) -> str:
        out: list[str] = []
        used = 0
        for index, (text, sgr) in enumerate(self.spans):
            room = width - used
            last = index == len(self.spans) - 1
            if len(text) > room or (len(text) == room and not last):
                text = text[: max(0, room - 1)] + style.ellipsis
                out.append(f"\x1b[{sgr}m{text}{RESET}" if style.color and sgr else text)
                break
            out.append(f"\x1b[{sgr}m{text}{RESET}" if style.color and sgr else text)
            used += len(text)
        return "".join(out).rstrip()


def card_face(text: str, style: Style) -> str:
    """``10H`` as ``10♥`` (or ``10H`` without symbols): rank then suit, three columns at
    most."""
    code = parse_card(text)
    rank = text[:-1].upper()
    if rank == "T":
        rank = "10"
    return rank + (SUIT_SYMBOLS[code & 3] if style.symbols else SUITS[code & 3])


def card_sgr(text: str, trump: str | None) -> str:
    """Red for the red suits, bold for a trump: the two things a glance must tell."""
    suit = SUITS[parse_card(text) & 3]
    codes = []
    if suit in ("D", "H"):
        codes.append(RED)
    if trump is not None and suit == trump:
        codes.append(BOLD)
    return ";".join(codes)


def sort_hand(cards: Sequence[str], trump: str | None) -> list[str]:
    """A hand in the order it is shown and numbered: by suit (♣ ♦ ♠ ♥, the trump suit
    last), low to high within a suit. The move parser numbers cards the same way."""
    trump_suit = SUITS.index(trump) if trump else -1

    def key(text: str) -> tuple[int, int, int]:
        code = parse_card(text)
        suit = code & 3
        return (suit == trump_suit, _SUIT_ORDER.index(suit), code >> 2)

    return sorted(cards, key=key)


def move_text(text: str, style: Style) -> str:
    """A move's canonical text with the cards drawn as on the table (``kill 3♥ 7♥``), its
    kind in the table's language."""
    words = []
    for word in in_words(text).split():
        try:
            parse_card(word)
        except ValueError:
            words.append(word)
        else:
            words.append(card_face(word, style))
    return " ".join(words)


def _add_move(line: _Line, text: str, style: Style, trump: str | None) -> None:
    for index, word in enumerate(in_words(text).split()):
        if index:
            line.add(" ")
        try:
            parse_card(word)
        except ValueError:
            line.add(word)
        else:
            line.add(card_face(word, style), card_sgr(word, trump))


def _add_cards(line: _Line, cards: Sequence[str], style: Style, trump: str | None) -> None:
    for index, card in enumerate(cards):
        if index:
            line.add(" ")
        line.add(card_face(card, style), card_sgr(card, trump))


def _grid(
    label: str,
    top: Sequence[tuple[str, str]],
    bottom: Sequence[tuple[str, str]],
    width: int,
) -> list[_Line]:
    """Two rows of four-column cells under one label: attack cards over the cards that
    killed them, or hand numbers over the hand. Wraps onto further row pairs."""
    indent = 7
    per_row = max(1, (width - indent) // 4)
    lines: list[_Line] = []
    for start in range(0, max(1, len(top)), per_row):
        upper = _Line().add(label if start == 0 else "")
        lower = _Line()
        for column, index in enumerate(range(start, min(len(top), start + per_row))):
            at = indent + 4 * column
            upper.pad(at).add(*top[index])
            if index < len(bottom):
                lower.pad(at).add(*bottom[index])
        lines += [upper, lower]
    return lines


def render_table(
    view: View,
    names: Sequence[str] | None = None,
    *,
    color: bool | None = None,
    symbols: bool = True,
    width: int = 80,
    height: int = 20,
    hands: Mapping[int, Sequence[str]] | None = None,
    losers: Sequence[int] | None = None,
    you: int | None = None,
    title: str | None = None,
    selected: int | None = None,
    spectating: bool = False,
) -> str:
    """The table as ``view.seat`` sees it, as text of at most ``height`` lines and ``width``
    columns.

    ``names`` are the seats' names (``seat N`` by default); ``color`` ``None`` means colour
    unless ``NO_COLOR`` is set. ``hands`` shows other seats' cards open (a replay after the
    game); ``losers`` marks the losers of a finished game; ``you`` is the seat to call "you"
    (the viewing seat by default, ``-1`` for nobody); ``title`` replaces the preset's name in
    the first line; ``selected`` is the index of the hand card picked with the arrow keys
    (marked by a pointer at its number, and reversed in colour); ``spectating``: a spectator's
    table (``moska watch``), every seat alike with no hand of its own, so ``view.seat`` is
    only whose public knowledge is shown. A ``height`` too small for
    the table itself leaves out the move log (the full-screen table draws its own).
    """
    style = Style(color=color_wanted() if color is None else color, symbols=symbols)
    players = view.players
    names = list(names) if names else [_("seat {seat}").format(seat=s) for s in range(players)]
    you = view.seat if you is None else you
    trump = view.trump
    over = view.decision == "over"
    lines: list[_Line] = []

    # Header: what the game is, the trump, the stock and the discards.
    head = _Line().add(title or view.preset, BOLD).add(f" {style.dot} ")
    if view.trump_card:
        head.add(_("trump") + " ")
        head.add(card_face(view.trump_card, style), card_sgr(view.trump_card, trump))
    elif trump:
        symbol = SUIT_SYMBOLS[SUITS.index(trump)] if style.symbols else trump
        head.add(_("trump") + " ").add(symbol, card_sgr("2" + trump, trump))
    else:
        head.add(_("no trump yet"))
    head.add(f" {style.dot} " + _("stock {count}").format(count=view.stock_size))
    face_up = [card for _, card in view.stock_known if card != view.trump_card_code]
    if face_up:
        head.add(" (" + _("face up:") + " ")
        _add_cards(head, [_code_text(c) for c in face_up], style, trump)
        head.add(")")
    head.add(f" {style.dot} " + _("out of play {count}").format(count=len(view.discarded)))
    head.add(f" {style.dot} " + _("move {number}").format(number=len(view.history)))
    lines.append(head)
    rule = _Line().add(style.rule_char * (width - 1), DIM)
    lines.append(rule)

    # One line per seat: name, hand size, role, whose decision it is, cards known to all.
    for seat in range(players):
        acting = not over and view.to_act == seat
        line = _Line().add(style.pointer + " ", BOLD) if acting else _Line().add("  ")
        name = names[seat][:16]
        if seat == you and name.lower() not in ("you", _("you")):
            name += " (" + _("you") + ")"
        line.add(name, BOLD if acting else "")
        size = view.hand_sizes[seat]
        line.pad(24).add(f"{size:2d} " + ngettext("card", "cards", size))
        role = _role(view, seat, losers)
        line.pad(35).add(role, REVERSE if role == _("LOST") else ("" if role != _("out") else DIM))
        extra_at = 45
        if acting:
            decision = DECISION_WORDS.get(view.decision)
            line.pad(extra_at).add(_(decision) if decision else view.decision, BOLD)
            extra_at = line.width + 2
        shown: Sequence[str]
        own = seat == view.seat and not spectating
        unseen = 0
        if hands is not None and seat in hands and not own:
            # A hand shown open at the end may hold cards nobody but its seat ever saw
            # (``??``: an observer's game); they are counted, not drawn.
            shown = sort_hand([c for c in hands[seat] if is_card_text(c)], trump)
            unseen = len(hands[seat]) - len(shown)
            prefix = ""
        else:
            shown = [] if own else sort_hand(view.known_cards(seat), trump)
            prefix = _("holds") + " "
        if shown:
            line.pad(extra_at).add(prefix)
            _add_cards(line, shown, style, trump)
        if unseen:
            line.pad(line.width + 1 if shown else extra_at)
            line.add(_("+{count} never shown").format(count=unseen), DIM)
        lines.append(line)
    lines.append(rule)

    # The bout: attack cards over the cards that killed them (a dot: not killed yet).
    if view.table:
        top = [(card_face(a, style), card_sgr(a, trump)) for a, _ in view.table]
        bottom = [
            (card_face(k, style), card_sgr(k, trump)) if k else (" " + style.dot, DIM)
            for _, k in view.table
        ]
        table_lines = _grid(_("table"), top, bottom, width)
    else:
        table_lines = [_Line().add(_("table")).pad(7).add(_("(empty)"), DIM)]
    if 0 < view.room < 100 and not over and view.decision in ("open", "throw-in", "give"):
        table_lines[0].pad(width - 16).add(_("room for {count}").format(count=view.room), DIM)
    lines += table_lines
    lines.append(rule)

    # The viewing seat's hand, sorted and numbered (the numbers are move shorthand).
    hand = sort_hand(view.hand, trump)
    hidden = view.hidden_in_hand
    if spectating:  # moska watch: a spectator holds no hand
        hand_lines = [_Line().add(_("hands face down: you are watching"), DIM)]
        hidden = 0
    elif hand:
        numbers = [
            (style.pointer + str(i), BOLD) if i - 1 == selected else (str(i), DIM)
            for i in range(1, len(hand) + 1)
        ]
        cards = [
            (card_face(c, style), _joined(card_sgr(c, trump), REVERSE if i == selected else ""))
            for i, c in enumerate(hand)
        ]
        hand_lines = _grid(_("hand"), numbers, cards, width)
    else:
        hand_lines = [_Line().add(_("hand")).pad(7).add(_("(no cards)"), DIM)]
    if hidden:
        hand_lines[-1].pad(hand_lines[-1].width + 2).add(
            _("+{count} not seen yet").format(count=hidden), DIM
        )
    lines += hand_lines

    # The latest moves, oldest first, in whatever room is left.
    room = height - len(lines) - 1
    recent = _recent_moves(view.history, room)
    if room > 0 and recent:
        lines.append(rule)
        for seats, text in recent:
            who = ", ".join(names[s][:16] for s in seats)
            line = _Line().add(f"{who}: ", DIM)
            _add_move(line, text, style, trump)
            lines.append(line)
    return "\n".join(line.text(style, width) for line in lines)


def is_card_text(text: str) -> bool:
    """Whether ``text`` names a card (``??`` stands for one nobody here has seen)."""
    try:
        parse_card(text)
    except ValueError:
        return False
    return True


def _joined(*codes: str) -> str:
    return ";".join(code for code in codes if code)


def log_lines(
    history: Sequence[tuple[int, object]],
    names: Sequence[str],
    *,
    color: bool,
    symbols: bool,
    trump: str | None,
    width: int,
) -> list[str]:
    """The whole game's move log, one line per move (a run of passes on one line), for the
    full-screen table's scrollable log pane."""
    style = Style(color=color, symbols=symbols)
    out = []
    for seats, text in _recent_moves(history, len(history) + 1):
        who = ", ".join(
            names[s][:16] if s < len(names) else _("seat {seat}").format(seat=s) for s in seats
        )
        line = _Line().add(f"{who}: ", DIM)
        _add_move(line, text, style, trump)
        out.append(line.text(style, width))
    return out


def _recent_moves(history: Sequence[tuple[int, object]], count: int) -> list[tuple[list[int], str]]:
    """The last ``count`` lines of the move log, a run of passes on one line: in Moska a
    round of "nothing to throw in" would otherwise push every real move off the screen."""
    lines: list[tuple[list[int], str]] = []
    for seat, move in reversed(history):
        text = str(move)
        if lines and text == "pass" and lines[-1][1] == "pass":
            lines[-1][0].insert(0, seat)
            continue
        if len(lines) == count:
            break
        lines.append(([seat], text))
    lines.reverse()
    return lines


def _role(view: View, seat: int, losers: Sequence[int] | None) -> str:
    if losers is not None and seat in losers:
        return _("LOST")
    if view.out[seat]:
        return _("out")
    if view.decision == "over":
        return ""
    if seat == view.attacker:
        return _("attacker")
    if seat == view.defender:
        return _("defender")
    return ""


def _code_text(code: int) -> str:
    return CARD_TEXT[code]


def strip_ansi(text: str) -> str:
    """``text`` without colour codes (for tests and plain logs)."""
    return ANSI.sub("", text)

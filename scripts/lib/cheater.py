"""A client as a player who wants to win at any cost would run it: the real ``moska``, with
its peer session wrapped so that, once its seat is losing, it quits the game in one of the
ways a real client can (it does not touch anybody else's process or bytes).

Run as ``python -m scripts.lib.cheater MODE -- join ...`` (every argument after ``--`` goes to
``moska``). Modes, each triggered once, at the first point where this seat is losing (the
stock is empty, two seats still hold cards and this one holds more) or, for ``die-decided``,
where the signed moves have made it a loser:

* ``kill``: SIGKILL its own process (a crash, a pulled plug);
* ``stop``: SIGSTOP its own process (the harness may SIGCONT it later: a laptop lid);
* ``bogus``: sign a ``timeout`` verdict naming the other seat still holding cards, send it,
  and say nothing more (one signed false word);
* ``silent``: stay connected but never send another frame, not even in answer to a peer's
  ``sync`` or as a hand-over at the end (cut its own links);
* ``half-silent``: its session sends nothing more, but its node still answers ``sync``
  requests (and hands over at the end) with what it holds, the moves its bot goes on signing
  included: some peers get its frames, when they ask, and others not (asymmetric);
* ``die-decided``: SIGKILL itself the moment the game's last move makes it a loser, before its
  ``result`` leaves (a decided game the loser tries to erase).

Used by ``scripts/quit_matrix_net.py``; nothing in the package imports it.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import PeerSession

MODES = ("kill", "stop", "bogus", "silent", "half-silent", "die-decided")
WRAPPED = ("start", "receive", "play", "tick", "finish_job", "leave")
ANSWERS = ("frames_after",)  # what the node sends from the session besides its outputs


def losing_seat(session: PeerSession) -> int | None:
    """The other seat still holding cards when this seat is losing, else None."""
    game = session.game
    if game is None or game.is_over or game.stock_size > 0 or session.is_observer:
        return None
    me = session.my_seat
    holding = [s for s, size in enumerate(game.hand_sizes()) if size > 0]
    if len(holding) != 2 or me not in holding:
        return None
    (other,) = (s for s in holding if s != me)
    return other if game.hand_size(me) > game.hand_size(other) else None


def decided_loser(session: PeerSession) -> bool:
    game = session.game
    return game is not None and game.is_over and session.my_seat in game.loser_seats


class Cheat:
    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise SystemExit(f"cheater: unknown mode {mode!r}: one of {', '.join(MODES)}")
        self.mode = mode
        self.done = False
        self.mute = False

    def after(self, session: PeerSession, outputs: list[v.Output]) -> list[v.Output]:
        if self.mute:
            return [o for o in outputs if not isinstance(o, v.Send)]
        if self.done:
            return outputs
        if self.mode == "die-decided":
            if decided_loser(session):
                self.trigger("the last move made this seat a loser")
                os.kill(os.getpid(), signal.SIGKILL)
            return outputs
        other = losing_seat(session)
        if other is None:
            return outputs
        self.trigger(f"losing to seat {other}")
        if self.mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
            return outputs
        self.mute = True
        if self.mode in ("silent", "half-silent"):
            return [o for o in outputs if not isinstance(o, v.Send)]
        # bogus: one signed false accusation of the seat it is losing to, then silence
        body = {
            "kind": v.TIMEOUT,
            "culprits": [session.seats[other]],
            "reason": "no answer",
            "evidence": [],
            "relayed": [],
        }
        frame = session.craft("verdict", body)
        return [*[o for o in outputs if not isinstance(o, v.Send)], v.Send(frame)]

    def answers(self, frames: list[bytes]) -> list[bytes]:
        """What the node may send of the session's frames besides its outputs (a ``sync``
        answer, a hand-over): nothing once muted, except in ``half-silent``."""
        return [] if self.mute and self.mode != "half-silent" else frames

    def trigger(self, why: str) -> None:
        self.done = True
        print(f"cheater: {self.mode}: {why}", file=sys.stderr, flush=True)


def install(cheat: Cheat) -> None:
    for name in WRAPPED:
        original: Callable[..., list[v.Output]] = getattr(PeerSession, name)

        @functools.wraps(original)
        def wrapped(
            self: PeerSession,
            *args: Any,
            __original: Callable[..., list[v.Output]] = original,
            **kwargs: Any,
        ) -> list[v.Output]:
            return cheat.after(self, __original(self, *args, **kwargs))

        setattr(PeerSession, name, wrapped)
    for name in ANSWERS:
        answer: Callable[..., list[bytes]] = getattr(PeerSession, name)

        @functools.wraps(answer)
        def muted(
            self: PeerSession,
            *args: Any,
            __original: Callable[..., list[bytes]] = answer,
            **kwargs: Any,
        ) -> list[bytes]:
            return cheat.answers(__original(self, *args, **kwargs))

        setattr(PeerSession, name, muted)


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[1] != "--":
        raise SystemExit("usage: python -m scripts.lib.cheater MODE -- MOSKA-ARGS...")
    install(Cheat(argv[0]))
    from moska_p2p.cli import main as moska

    sys.argv = ["moska", *argv[2:]]
    moska()


if __name__ == "__main__":
    main(sys.argv[1:])

"""The arena: many engine-only games between bots, spread over processes, reproducibly.

Fairness. The bots are rotated through the seats and the deals are played in duplicate: the
games come in groups of ``n`` (the number of players) that share one deal (deck and dealer),
and game ``i`` of a group seats bot ``j`` of the list at seat ``(j - i) mod n``. Over a
group, every bot holds every seat of every deal exactly once, so no bot profits from its
seat or from a lucky deal (as in duplicate bridge). A run whose game count is not a multiple
of ``n`` leaves its last group incomplete; a multiple of ``n`` is fair exactly.

Reproducibility. Every random number comes from seeds derived from ``(seed, game index)``:
the deal from ``(seed, group)``, each bot from ``(seed, game, list position)``. Bots are
made afresh for each game with its seed (except external ``exec:`` bots, one process per
chunk of games), the chunks of game indices do not depend on ``jobs``, and the results are
merged in game order, so the results are identical whatever ``jobs`` is.

Where the chunks run: in this process, in ``jobs`` worker processes, or on a Dask cluster
(:mod:`.cluster`, ``--cluster``): the same chunks, the same results. How a game is played: on
one full-information engine (:func:`~moska_p2p.table.local.play_game`, the hot path), or
through the protocol with a peer per seat (:mod:`.p2p`, ``--p2p``), which also counts
verdicts and disagreements between peers.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import random
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bots.api import Bot
from ..bots.builtin import GreedyBot, RandomBot, ShedderBot
from ..bots.loader import BotLoadError, load_bot
from ..engine import Game, IllegalMove, make_rules, new_game, shuffled_deck
from ..table.local import play_game
from ..table.seat import LeaveTable
from .cluster import ClusterError, ClusterFailed, parse_address, run_chunks
from .p2p import play_game as play_p2p_game
from .stats import BotStats, GameOutcome, Rating, rate, tally

DEFAULT_MAX_MOVES = 5000  # moska games between random bots average about 200 moves
CHUNKS = 64  # a run is cut into about this many chunks, whatever ``jobs`` is
MAX_CHUNK = 250
MIN_EXTERNAL_CHUNK = 25  # an external bot process serves at least this many games

Progress = Callable[[int, int], None]

if TYPE_CHECKING:
    from ..table.simulate import TamperFactory

# Built-ins made directly: ``load_bot`` inspects the constructor on every call, which costs
# a tenth of a random game when bots are made afresh for each game.
_FAST_BUILTINS: dict[str, Callable[[int], Bot]] = {
    "random": lambda seed: RandomBot(seed=seed),
    "greedy": lambda seed: GreedyBot(seed=seed),
    "shedder": lambda seed: ShedderBot(seed=seed),
}


class ArenaError(ValueError):
    """An arena that cannot run: unknown bot, preset or option, or a wrong seat count."""


class ArenaFailed(ArenaError):
    """An arena that began but could not finish: its cluster failed (exit 1, not 2)."""


@dataclass
class ArenaResult:
    """What an arena run found, ready to print or to write as JSON."""

    preset: str
    bots: list[str]
    seed: int
    options: dict[str, str]
    max_moves: int
    budget: float | None
    outcomes: list[GameOutcome]
    stats: list[BotStats]
    ratings: list[Rating] | None = None
    unfinished_games: list[int] = field(default_factory=list)
    p2p: bool = False  # played through the protocol: verdicts and disagreements count
    interrupted: bool = False  # stopped by Ctrl-C: ``outcomes`` are the games played by then

    @property
    def verdict_games(self) -> list[GameOutcome]:
        """The games a verdict stopped (``--p2p``): a peer convicted, not a seat's forfeit."""
        return [o for o in self.outcomes if o.verdict]

    @property
    def disagreement_games(self) -> list[GameOutcome]:
        """The games in which an honest peer's outcome differs from the others' (``--p2p``)."""
        return [o for o in self.outcomes if o.disagreeing]

    @property
    def games(self) -> int:
        return len(self.outcomes)

    @property
    def unfinished(self) -> int:
        return len(self.unfinished_games)

    def to_json(self) -> dict[str, Any]:
        """The results as data (no timings: equal runs give equal JSON)."""
        data: dict[str, Any] = {
            "preset": self.preset,
            "players": len(self.bots),
            "seed": self.seed,
            "options": self.options,
            "max_moves": self.max_moves,
            "budget": self.budget,
            "games": self.games,
            "unfinished": self.unfinished,
            "unfinished_games": self.unfinished_games,
            "bots": [s.to_json(self.p2p) for s in self.stats],
        }
        if self.interrupted:
            data["interrupted"] = True  # Ctrl-C: the games played by then
        if self.p2p:
            data["p2p"] = True
            data["verdicts"] = len(self.verdict_games)
            data["verdict_games"] = [
                {
                    "game": o.game,
                    "kind": o.verdict,
                    "named": [self.bots[o.entries[s]] if s >= 0 else None for s in o.named],
                    "seats": list(o.named),
                    "reason": o.reason,
                }
                for o in self.verdict_games
            ]
            data["disagreements"] = len(self.disagreement_games)
            data["disagreement_games"] = [
                {"game": o.game, "seats": list(o.disagreeing)} for o in self.disagreement_games
            ]
        if self.ratings is not None:
            data["ratings"] = [r.to_json() for r in self.ratings]
        return data


def derive_seed(seed: int, *parts: int | str) -> int:
    """A 63-bit seed from ``seed`` and ``parts``: stable across runs, processes, platforms
    (a hash, not Python's salted ``hash``)."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") >> 1


def bot_seeds(seed: int, index: int, players: int) -> list[int]:
    """The seeds (63 bits) of game ``index``'s bots, by position in the bot list: cut from
    one hash, which costs a fifth of one ``derive_seed`` call per bot."""
    text = f"{seed}:bot:{index}".encode()
    digest = hashlib.blake2b(text, digest_size=8 * players).digest()
    return [int.from_bytes(digest[8 * j : 8 * j + 8], "big") >> 1 for j in range(players)]


def seating(index: int, players: int) -> tuple[int, ...]:
    """``entries[seat]``: the position in the bot list of the bot at each seat in game
    ``index`` (bot ``j`` sits at seat ``(j - index) mod players``)."""
    shift = index % players
    return tuple((seat + shift) % players for seat in range(players))


def deal_seed(seed: int, index: int, players: int) -> int:
    """The seed of game ``index``'s deal, shared by its group of ``players`` games."""
    return derive_seed(seed, "deal", index // players)


@dataclass(frozen=True)
class _Config:
    """What a worker needs to play its games (picklable)."""

    preset: str
    bots: tuple[str, ...]
    seed: int
    options: tuple[tuple[str, str], ...]
    budget: float | None
    max_moves: int
    save_dir: str | None
    name_width: int
    p2p: bool = False  # every game through the protocol (:mod:`.p2p`)
    tamper: TamperFactory | None = None  # tests only: a cheating seat (``--p2p``)


def _bot_factory(spec: str) -> Callable[[int], Bot]:
    fast = _FAST_BUILTINS.get(spec.strip())
    if fast is not None:
        return fast
    return lambda seed: load_bot(spec, seed=seed)


def _close(bot: Bot) -> None:
    close = getattr(bot, "close", None)
    if callable(close):
        close()


def _close_made(
    bots: Sequence[Bot], entries: tuple[int, ...], factories: Sequence[object]
) -> None:
    for j, bot in zip(entries, bots, strict=True):
        if factories[j] is not None:
            _close(bot)  # a bot made for this game only


def _play_chunk(config: _Config, start: int, stop: int) -> list[GameOutcome]:
    """Play games ``start`` to ``stop - 1`` (in a worker, or in-process with one job)."""
    n = len(config.bots)
    options: dict[str, Any] = dict(config.options)
    factories: list[Callable[[int], Bot] | None] = []
    external: dict[int, Bot] = {}
    save_dir = Path(config.save_dir) if config.save_dir else None
    record_moves = save_dir is not None
    outcomes = []
    try:
        for j, spec in enumerate(config.bots):
            if spec.strip().startswith("exec:"):
                factories.append(None)
                external[j] = load_bot(spec)
            else:
                factories.append(_bot_factory(spec))
        rules = make_rules(config.preset, **options)
        last_deal = -1
        deck: list[int] = []
        dealer = 0
        for index in range(start, stop):
            entries = seating(index, n)
            deal = deal_seed(config.seed, index, n)
            if deal != last_deal and not config.p2p:
                # The n games of a group share one deal: shuffle it once (as new_game would).
                last_deal = deal
                rng = random.Random(deal)
                deck = shuffled_deck(rules, rng)
                dealer = rng.randrange(n)
            seeds = bot_seeds(config.seed, index, n)
            bots: list[Bot] = []
            for j in entries:
                factory = factories[j]
                if factory is None:
                    bot = external[j]  # one process for the chunk; the seed is per game
                    if hasattr(bot, "seed"):
                        bot.seed = seeds[j]
                    bots.append(bot)
                else:
                    bots.append(factory(seeds[j]))
            if config.p2p:
                outcomes.append(
                    play_p2p_game(
                        config.preset,
                        dict(config.options),
                        bots,
                        entries,
                        index,
                        deal,
                        budget=config.budget,
                        max_moves=config.max_moves,
                        tamper=config.tamper,
                        save_dir=save_dir,
                        name_width=config.name_width,
                    )
                )
                _close_made(bots, entries, factories)
                continue
            game = Game(rules, n, deck, dealer)
            record = play_game(
                game,
                bots,
                seed=deal,
                budget=config.budget,
                max_moves=config.max_moves,
                record_moves=record_moves,
                names=[config.bots[j] for j in entries],
            )
            outcomes.append(
                GameOutcome(
                    index,
                    entries,
                    record.losers,
                    record.forfeit,
                    record.reason,
                    record.unfinished,
                    record.move_count,
                )
            )
            if save_dir is not None:
                data = record.to_json() | {"game": index, "arena_seed": config.seed}
                path = save_dir / f"game-{index:0{config.name_width}d}.json"
                path.write_text(json.dumps(data) + "\n")
            _close_made(bots, entries, factories)
    finally:
        for bot in external.values():
            _close(bot)
    return outcomes


def _chunks(games: int, external: bool) -> Iterator[tuple[int, int]]:
    """Ranges of game indices. The size depends on the run, never on ``jobs``: a chunk is
    an external bot's process lifetime, which must not change with ``jobs`` either."""
    smallest = MIN_EXTERNAL_CHUNK if external else 1
    size = max(smallest, min(MAX_CHUNK, -(-games // CHUNKS)))
    for start in range(0, games, size):
        yield start, min(games, start + size)


def validate(preset: str, bots: Sequence[str], options: dict[str, Any]) -> dict[str, str]:
    """Check the preset, options, seat count and every bot; all the preset's options with
    their values, as text.

    Raises :class:`ArenaError` with a one-line message.
    """
    if not bots:
        raise ArenaError("name at least two bots, one per seat (e.g. --bots greedy,random)")
    try:
        rules = make_rules(preset, **options)
    except ValueError as error:  # OptionError
        raise ArenaError(str(error).splitlines()[0]) from None
    if not rules.min_players <= len(bots) <= rules.max_players:
        raise ArenaError(
            f"{preset} is for {rules.min_players} to {rules.max_players} players:"
            f" name one bot per seat, not {len(bots)}"
        )
    try:
        new_game(preset, players=len(bots), seed=0, **options)
    except ValueError as error:  # e.g. durak-teams at an odd table
        raise ArenaError(str(error).splitlines()[0]) from None
    for spec in dict.fromkeys(bots):
        try:
            _close(load_bot(spec, seed=0))
        except BotLoadError as error:
            raise ArenaError(str(error).splitlines()[0]) from None
        except Exception as error:
            raise ArenaError(f'bot "{spec}" cannot be made: {error!r}') from None
    return rules.options()


def run_arena(
    preset: str,
    bots: Sequence[str],
    games: int,
    seed: int = 0,
    jobs: int = 1,
    options: dict[str, Any] | None = None,
    budget: float | None = 1.0,
    max_moves: int = DEFAULT_MAX_MOVES,
    save_dir: Path | None = None,
    progress: Progress | None = None,
    p2p: bool = False,
    cluster: str | None = None,
    tamper: TamperFactory | None = None,
) -> ArenaResult:
    """Play ``games`` games of ``preset``, one seat per bot of ``bots``, and tally them.

    ``budget`` is each untrusted bot's time per decision in seconds (built-ins skip the
    timer); ``max_moves`` ends a game as unfinished; ``save_dir`` receives every game as
    JSON (replayable with :func:`check_replay`); ``progress(done, total)`` is called as
    chunks of games finish. Ratings are computed when more than two kinds of bot play.
    ``p2p`` plays every game through the protocol (:mod:`.p2p`; ``save_dir`` then gets
    every peer's transcripts, a folder per game); ``cluster`` runs the chunks on a Dask
    cluster instead of ``jobs`` processes (:mod:`.cluster`), with the same results.
    ``tamper`` (tests only, with ``p2p``) makes a cheating seat.
    """
    bots = [b.strip() for b in bots]
    options = options or {}
    if games < 0:
        raise ArenaError(f"the number of games must be 0 or more, not {games}")
    if jobs < 1:
        raise ArenaError(f"--jobs must be 1 or more, not {jobs}")
    if max_moves < 1:
        raise ArenaError(f"--max-moves must be 1 or more, not {max_moves}")
    if budget is not None and budget <= 0:
        raise ArenaError(f"--budget must be a positive number of seconds, not {budget}")
    if cluster is not None:
        if jobs != 1:
            raise ArenaError("--cluster runs the games on the cluster's workers: drop --jobs")
        try:
            parse_address(cluster)
        except ClusterError as error:
            raise ArenaError(str(error)) from None
    chosen = validate(preset, bots, options)
    if save_dir is not None and save_dir.exists() and not save_dir.is_dir():
        raise ArenaError(
            f"--save {save_dir}: that is a file; name a folder (it is made if missing)"
        )
    # Only the options that differ from the preset's: with none, every game shares the
    # preset's own Rules instead of building a copy (a few percent of a random game).
    defaults = make_rules(preset).options()
    changed = {k: v for k, v in chosen.items() if v != defaults[k]}
    if save_dir is not None:
        try:
            save_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ArenaError(f"--save {save_dir}: {error.strerror or error}") from None
    config = _Config(
        preset,
        tuple(bots),
        seed,
        tuple(sorted(changed.items())),
        budget,
        max_moves,
        str(save_dir) if save_dir is not None else None,
        max(6, len(str(max(games - 1, 0)))),
        p2p,
        tamper,
    )
    chunks = list(_chunks(games, any(b.startswith("exec:") for b in bots)))
    results: dict[int, list[GameOutcome]] = {}
    done = 0
    if progress:
        progress(0, games)
    interrupted = False
    try:
        if cluster is not None:

            def finished_chunk(start: int, result: list[GameOutcome]) -> None:
                nonlocal done
                results[start] = result
                done += len(result)
                if progress:
                    progress(done, games)

            try:
                run_chunks(cluster, _play_chunk, config, chunks, finished_chunk)
            except ClusterFailed as error:
                raise ArenaFailed(str(error)) from None
            except ClusterError as error:
                raise ArenaError(str(error)) from None
        elif jobs == 1 or len(chunks) <= 1:
            for start, stop in chunks:
                results[start] = _play_chunk(config, start, stop)
                done += stop - start
                if progress:
                    progress(done, games)
        else:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
                pending: dict[Future[list[GameOutcome]], int] = {
                    pool.submit(_play_chunk, config, start, stop): start for start, stop in chunks
                }
                try:
                    while pending:
                        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                        for future in finished:
                            start = pending.pop(future)
                            results[start] = future.result()
                            done += len(results[start])
                            if progress:
                                progress(done, games)
                except BaseException:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
    except (KeyboardInterrupt, LeaveTable):  # Ctrl-C: the games of the chunks done count
        interrupted = True
    outcomes = [o for start in sorted(results) for o in results[start]]
    stats = tally(bots, outcomes)
    ratings = rate(bots, outcomes) if len(set(bots)) > 2 else None
    return ArenaResult(
        preset,
        bots,
        seed,
        chosen,
        max_moves,
        budget,
        outcomes,
        stats,
        ratings,
        [o.game for o in outcomes if o.unfinished],
        p2p,
        interrupted,
    )


def _context() -> Any:
    """'fork' where there is one: workers start at once and inherit the loaded bot files;
    'spawn' elsewhere (the workers import what they need)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def check_replay(data: dict[str, Any]) -> str | None:
    """Replay a saved game through the engine: ``None`` if its moves and result reproduce,
    else what differs."""
    try:
        game = new_game(
            data["preset"],
            players=data["players"],
            deck=data["deck"],
            dealer=data["dealer"],
            **data.get("options", {}),
        )
        moves = data["moves"]
        losers = tuple(data["losers"])
        forfeit = data.get("forfeit")
        unfinished = bool(data.get("unfinished"))
    except (KeyError, TypeError, ValueError) as error:
        return f"not a saved game: {error!r}"
    for number, (seat, text) in enumerate(moves, 1):
        if game.to_act_seat != seat:
            return f"move {number}: seat {seat} played but seat {game.to_act_seat} was to act"
        try:
            game.play(text)
        except (IllegalMove, ValueError) as error:
            return f"move {number} ({text}) is not legal: {error}"
    if "move_count" in data and data["move_count"] != len(moves):
        return f"{len(moves)} moves saved but the game had {data['move_count']}"
    if forfeit is not None:
        if losers != (forfeit,):
            return f"forfeit by seat {forfeit} but losers {list(losers)}"
        return None
    if unfinished:
        return "the game is over, yet saved as unfinished" if game.is_over else None
    if not game.is_over:
        return "the moves end before the game does"
    if game.loser_seats != losers:
        return f"the engine's losers are {list(game.loser_seats)}, the saved ones {list(losers)}"
    return None


def replay_files(path: Path) -> Iterator[Path]:
    """The saved games at ``path``: the file itself, or a folder's ``game-*.json``."""
    if path.is_dir():
        yield from sorted(path.glob("game-*.json"))
    else:
        yield path

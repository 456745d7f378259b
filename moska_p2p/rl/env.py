"""The PettingZoo AEC environment over the engine (see the package docstring)."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..bots.encoding import DENSE_MOVE_IDS, VIEW_SIZE, encode_view, move_id
from ..cards import NUM_CARDS
from ..engine import ATTACK, PRESETS, Game, Move, View, attack_from_mask, make_rules, new_game

# Actions: below DENSE_MOVE_IDS the stable move ids (bots/encoding.py); then one "add card c
# to the attack being built" per card, then "lay the attack built" (see the package doc).
ADD_CARD_BASE = DENSE_MOVE_IDS
LAY_ACTION = ADD_CARD_BASE + NUM_CARDS
NUM_ACTIONS = LAY_ACTION + 1
# The observation: the view encoding, then the cards of the attack being built.
OBSERVATION_SIZE = VIEW_SIZE + NUM_CARDS
DEFAULT_MAX_MOVES = 5000


def _is_multi(move: Move) -> bool:
    return move[0] == ATTACK and len(move[1]) >= 2


def _mask_of(move: Move) -> int:
    mask = 0
    for card in move[1]:
        mask |= 1 << card
    return mask


class MoskaEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """One game of a preset at a table of ``players`` agents ``player_0`` .. ``player_{n-1}``
    (seat numbers). Use :func:`env` for the wrapped form that refuses illegal actions."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "moska_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        preset: str = "moska",
        players: int = 4,
        max_moves: int = DEFAULT_MAX_MOVES,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        if preset not in PRESETS:
            raise ValueError(f'unknown preset "{preset}": choose one of {", ".join(PRESETS)}')
        rules = make_rules(preset, **options)  # checks the options (OptionError: ValueError)
        if not rules.min_players <= players <= rules.max_players:
            raise ValueError(
                f"{preset} is for {rules.min_players} to {rules.max_players} players,"
                f" not {players}"
            )
        if rules.teams and players % 2:
            raise ValueError(f"{preset} needs an even number of players, not {players}")
        if max_moves < 1:
            raise ValueError(f"max_moves must be at least 1, not {max_moves}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f'render_mode must be None or "ansi", not {render_mode!r}')
        self.preset = preset
        self.players = players
        self.options = options
        self.max_moves = max_moves
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        # One space object per agent, the same each call (PettingZoo's seeding relies on it).
        self.observation_spaces = {a: observation_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.agent_selection: str = self.possible_agents[0]
        self._rng = random.Random()
        self.game: Game = new_game(preset, players, seed=0, **options)
        self._pending = 0
        self._moves = 0
        self._legal: list[Move] = []

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the AEC API

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game. A ``seed`` fixes this deal and every later unseeded one."""
        del options  # nothing to choose per episode: the table is set in the constructor
        if seed is not None:
            self._rng = random.Random(seed)
        deal = self._rng.getrandbits(64)
        self.game = new_game(self.preset, self.players, seed=deal, **self.options)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._pending = 0
        self._moves = 0
        self._select()

    def observe(self, agent: str) -> dict[str, np.ndarray[Any, Any]]:
        seat = self._seat[agent]
        vector = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        vector[:VIEW_SIZE] = encode_view(View(self.game, seat))
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if agent == self.agent_selection and not self.game.is_over:
            pending = self._pending
            for card in range(NUM_CARDS):
                if pending >> card & 1:
                    vector[VIEW_SIZE + card] = 1.0
            for action in self._legal_actions():
                mask[action] = 1
        return {"observation": vector, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = int(action)
        if action not in self._legal_actions():
            raise ValueError(f"action {action} is not legal for {agent} now")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if ADD_CARD_BASE <= action < LAY_ACTION:
            self._pending |= 1 << (action - ADD_CARD_BASE)
            return  # the same agent goes on building its attack
        if action == LAY_ACTION:
            move = attack_from_mask(self._pending)
        else:
            move = next(m for m in self._legal if move_id(m) == action)
        self._pending = 0
        self.game.play_unchecked(move)
        self._moves += 1
        game = self.game
        if game.is_over:
            losers = set(game.loser_seats)
            for a in self.agents:
                self.rewards[a] = self._reward(self._seat[a], losers)
                self.terminations[a] = True
        elif self._moves >= self.max_moves:
            for a in self.agents:
                self.truncations[a] = True
        self._select()
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called with no render_mode set")
            return None
        game = self.game
        lines = [f"{self.preset} · trump {game.trump_card} · stock {game.stock_size}"]
        for seat in range(game.n):
            mark = ">" if seat == game.to_act_seat else " "
            lines.append(f"{mark} player_{seat}: {' '.join(game.hand(seat))}")
        lines.append("table: " + " ".join(f"{a}/{k or '.'}" for a, k in game.table))
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release: the engine holds no resources."""

    # ------------------------------------------------------------------ helpers

    def _reward(self, seat: int, losers: set[int]) -> float:
        """Zero-sum: -1 to each loser, the others share the losers' loss equally (+1/3
        each at a table of four with one loser, +1 each for the winning team of
        durak-teams, D12); a draw (nobody left holding cards, D10) is 0 for everyone."""
        if not losers:
            return 0.0
        if seat in losers:
            return -1.0
        return len(losers) / (self.players - len(losers))

    def _select(self) -> None:
        """Point ``agent_selection`` at the seat to act and list its moves."""
        game = self.game
        if game.is_over or any(self.truncations.values()):
            self._legal = []
            # Every agent is done: any of them steps first (with None) to leave.
            self.agent_selection = self.agents[0] if self.agents else self.agent_selection
            return
        seat = game.to_act_seat
        self.agent_selection = self.possible_agents[seat]
        self._legal = game.legal_moves()

    def _legal_actions(self) -> list[int]:
        """The actions legal now, for the agent to act (see the package docstring)."""
        pending = self._pending
        multis = [_mask_of(m) for m in self._legal if _is_multi(m)]
        actions: list[int] = []
        if not pending:
            addable = 0
            for move in self._legal:
                if not _is_multi(move):
                    actions.append(move_id(move))
            for mask in multis:
                addable |= mask
        else:
            addable = 0
            lay = False
            for mask in multis:
                if mask & pending == pending:
                    if mask == pending:
                        lay = True
                    else:
                        addable |= mask & ~pending
            if lay:
                actions.append(LAY_ACTION)
        for card in range(NUM_CARDS):
            if addable >> card & 1:
                actions.append(ADD_CARD_BASE + card)
        return sorted(actions)


def raw_env(preset: str = "moska", players: int = 4, **kwargs: Any) -> MoskaEnv:
    """The environment without wrappers: an illegal action raises ``ValueError``."""
    return MoskaEnv(preset, players, **kwargs)


def env(preset: str = "moska", players: int = 4, **kwargs: Any) -> AECEnv:
    """The environment as PettingZoo's classic games wrap theirs: an illegal action ends
    the game with -1 for the agent that played it (``TerminateIllegalWrapper``), an action
    out of range is an assertion error, and the AEC call order is enforced."""
    wrapped: AECEnv = wrappers.TerminateIllegalWrapper(raw_env(preset, players, **kwargs), -1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)

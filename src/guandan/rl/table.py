"""One table for RL: a :class:`~guandan.core.match.Game`, its public state, an encoder and an
action mode. The PettingZoo env, the Gymnasium wrapper and :class:`~guandan.rl.vec.VecEnv` are thin
layers over :class:`Table`.

Episodes and rewards (team-shared, zero-sum; docs/rules.md R33-R42)
--------------------------------------------------------------
* ``reward="deal"`` (default): an episode is one deal; at its end every seat of the team of 头游
  (the first seat out, R35) gets +1 and the others -1.
* ``reward="levels"``: an episode is one deal; the winning team gets +u and the other -u, where u
  is the upgrade the finish earns (``Settlement.upgrade``: 3/2/1 for 1-2/1-3/1-4 under the
  ``official`` preset, R35, streak bonus included; caps at the target are not subtracted).
* ``reward="game"``: an episode is a whole game (from level 2 until a team passes the target,
  R37); +1/-1 at its end, 0 after every deal before.

With ``deal`` and ``levels`` the game carries on across episodes: :meth:`Table.reset` without a
seed starts the next deal of the same game, with its tribute and return (R43-R49) as real
decisions; a new game starts when the last one is over or when a seed is given.

Action modes
------------
* ``abstract`` (default): :mod:`guandan.rl.abstract` ids (471); the env realises an id with
  :func:`~guandan.rl.abstract.canonical_choice`.
* ``candidates``: index into this decision's legal actions, padded to ``max_candidates`` rows
  of per-action features (``Encoder.action_features``) with a mask. When a decision has more
  legal actions than ``max_candidates`` (possible when leading with wilds), the canonical
  realisation of every abstract id comes first, then the rest in engine order, truncated.
* ``cards``: index into the exact legal actions of the engine (``Game.legal_actions()`` order),
  padded to :data:`MAX_CARDS`; a ``(type, rank, cards)`` tuple is accepted too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from guandan.core.deal import PLAY
from guandan.core.match import Game
from guandan.core.plays import PASS, PlayT
from guandan.core.rules import RuleSet

from . import abstract, fastmask
from .encoders import Encoder, make_encoder
from .public import PublicState

ACTION_MODES = ("abstract", "candidates", "cards")
REWARDS = ("deal", "levels", "game")
#: Width of the ``cards`` action space (the most legal actions seen in random play is ~3,100).
MAX_CARDS = 8192
DEFAULT_MAX_CANDIDATES = 512


class Table:
    """A Guandan table stepped one decision at a time.

    Args:
        preset: rule preset name (``aicomp`` by default) or a :class:`RuleSet`.
        action_mode: ``abstract``, ``candidates`` or ``cards``.
        obs: encoder name (``default`` or ``danzero``) or an :class:`Encoder`.
        reward: ``deal``, ``levels`` or ``game`` (see the module docstring).
        seed: seed of the table's games (each game gets a seed drawn from it).
        max_candidates: rows of the ``candidates`` array.
        reference: use the reference paths: the ``abstract`` mask by enumerating and grouping
            the engine's legal actions and the encoder's from-scratch ``encode_reference``
            (same results, slower; for tests and for ``guandan bench rl``'s before/after).
    Attributes:
        version: ``int``, bumped whenever the table's state changes (every applied action, new
            deal or game, clone, world table): a key for caching what was built from the state
            (the PettingZoo env's per-seat observations).
    Raises:
        ValueError: an unknown mode, reward, encoder or preset.
    """

    def __init__(
        self,
        preset: str | RuleSet = "aicomp",
        action_mode: str = "abstract",
        obs: str | Encoder = "default",
        reward: str = "deal",
        seed: int | None = None,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        reference: bool = False,
    ) -> None:
        if action_mode not in ACTION_MODES:
            raise ValueError(f"unknown action_mode {action_mode!r}; valid: {', '.join(ACTION_MODES)}")
        if reward not in REWARDS:
            raise ValueError(f"unknown reward {reward!r}; valid: {', '.join(REWARDS)}")
        if isinstance(max_candidates, bool) or not isinstance(max_candidates, int) or max_candidates < 1:
            raise ValueError(f"max_candidates must be a positive int, not {max_candidates!r}")
        self.rules = preset if isinstance(preset, RuleSet) else RuleSet.preset(preset)
        self.action_mode = action_mode
        self.encoder = obs if isinstance(obs, Encoder) else make_encoder(obs)
        self.reward_mode = reward
        self.max_candidates = max_candidates
        self.reference = bool(reference)
        self._encode = getattr(self.encoder, "encode_reference", self.encoder.encode) if reference else self.encoder.encode
        self.n_actions = {
            "abstract": abstract.N_ABSTRACT, "candidates": max_candidates, "cards": MAX_CARDS
        }[action_mode]
        self.obs_size = self.encoder.size
        self.pub = PublicState()
        self._seeder = random.Random(seed)
        self.game: Game
        self.done = False
        self.version = 0
        self.new_game()

    # -- episodes ----------------------------------------------------------------------------
    def new_game(self, seed: int | None = None) -> None:
        """Start a fresh game (seeded from ``seed`` when given, else from the table's seeder)."""
        if seed is not None:
            self._seeder = random.Random(seed)
        self.game = Game(self.rules, seed=self._seeder.getrandbits(64), max_games=1)
        self._start_episode()

    def reset(self, seed: int | None = None) -> None:
        """Start the next episode: a new game when ``seed`` is given, the game is over or the
        reward is ``game``; else the next deal of the current game (already dealt)."""
        if seed is not None or self.game.over or self.reward_mode == "game":
            self.new_game(seed)
        else:
            self._start_episode()

    def _start_episode(self) -> None:
        self.done = False
        self._n_settled = len(self.game.settlements)
        self._refresh()

    def _refresh(self) -> None:
        self.version += 1  # the state changed: what was built from it must be rebuilt
        self.pub.sync(self.game)
        self._legal: list[PlayT] | None = None
        self._groups: dict[int, list[PlayT]] | None = None
        self._cands: list[PlayT] | None = None
        self._ids: list[int] | None = None

    # -- the decision ------------------------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        """The seat to act, or ``None`` when the episode is over."""
        return None if self.done else self.game.to_act()

    def legal(self) -> list[PlayT]:
        """The exact legal actions of the seat to act (engine order)."""
        if self._legal is None:
            self._legal = self.game.legal_actions()
        return self._legal

    def groups(self) -> dict[int, list[PlayT]]:
        """Legal actions grouped by abstract id."""
        if self._groups is None:
            self._groups = abstract.group_actions(self.legal(), self.game.deal.level)
        return self._groups

    def legal_ids(self) -> list[int]:
        """The unmasked ``abstract`` ids of the current decision.

        Play phase: from rank counts (:mod:`guandan.rl.fastmask`, no card-level enumeration;
        the hand's shapes are cached until its hand changes); tribute and return: from the
        engine's legal list. Equal as a set to ``list(self.groups())``.
        """
        ids = self._ids
        if ids is None:
            d = self.game.deal
            if d.phase == PLAY and not self.game.over and not self.reference:
                seat = d.turn
                assert seat is not None
                hand = d.hands[seat]
                cache = self.pub.cache
                key = ("shapes", seat)
                ver = self.pub.hand_version[seat]
                got = cache.get(key)
                if got is not None and got[0] == ver:
                    sh = got[1]
                else:  # one entry per seat, replaced when its hand changes
                    sh = fastmask.HandShapes(hand, d.level, self.rules.full_house_joker_pair)
                    cache[key] = (ver, sh)
                ids = fastmask.legal_ids(sh, hand, d.top)  # type: ignore[arg-type]
            else:
                ids = list(self.groups())
            self._ids = ids
        return ids

    def candidates(self) -> list[PlayT]:
        """The ``candidates`` list (at most ``max_candidates``; see the module docstring)."""
        if self._cands is None:
            legal = self.legal()
            if len(legal) <= self.max_candidates:
                self._cands = legal
            else:
                hand = self.game.deal.hands[self.game.to_act()]  # type: ignore[index]
                level = self.game.deal.level
                first = [abstract.canonical_choice(g, hand, level) for g in self.groups().values()]
                chosen = set(first)
                rest = [a for a in legal if a not in chosen]
                self._cands = (first + rest)[: self.max_candidates]
        return self._cands

    def mask(self, out: np.ndarray) -> None:
        """Write the action mask of the current decision into ``out`` (``bool [n_actions]``)."""
        out.fill(False)
        if self.done:
            return
        mode = self.action_mode
        if mode == "abstract":
            out[self.legal_ids()] = True
        elif mode == "candidates":
            out[: len(self.candidates())] = True
        else:
            n = len(self.legal())
            if n > MAX_CARDS:
                raise RuntimeError(f"{n} legal actions exceed the cards action space ({MAX_CARDS})")
            out[:n] = True

    def candidate_features(self, out: np.ndarray) -> None:
        """Write ``[max_candidates, action_size]`` candidate features into ``out`` (zero padded)."""
        out.fill(0.0)
        if self.done:
            return
        level = self.game.deal.level
        enc = self.encoder
        for i, a in enumerate(self.candidates()):
            enc.action_features(a, level, out[i])

    def observe(self, seat: int, out: np.ndarray) -> None:
        """Write ``seat``'s observation into ``out`` (``float32 [obs_size]``)."""
        self._encode(self.pub, seat, self.game.deal.hands[seat], out)

    def resolve(self, action: Any) -> PlayT:
        """The engine action for an action of this mode (an int id / index, or a play tuple).

        Raises:
            ValueError: the action is not legal now (masked id, index out of range, illegal play).
        """
        if isinstance(action, (tuple, list)) and len(action) == 3 and isinstance(action[0], str):
            return self.game.check(tuple(action))  # type: ignore[return-value]
        try:
            i = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"not an action: {action!r}") from None
        mode = self.action_mode
        if mode == "abstract":
            if i not in self.legal_ids():
                what = abstract.describe(i) if 0 <= i < abstract.N_ABSTRACT else "out of range"
                raise ValueError(f"abstract action {i} ({what}) is not legal now (masked)")
            d = self.game.deal
            if self._groups is None and d.phase == PLAY and not self.reference:
                if i == abstract.PASS_ID:
                    return PASS  # type: ignore[return-value]
                hand = d.hands[d.turn]  # type: ignore[index]
                g = fastmask.play_group(i, hand, d.level, self.rules.full_house_joker_pair)
            else:
                g = self.groups()[i]
            return abstract.canonical_choice(g, d.hands[d.turn], d.level)  # type: ignore[index]
        lst = self.candidates() if mode == "candidates" else self.legal()
        if not 0 <= i < len(lst):
            raise ValueError(f"action index {i} is masked: this decision has {len(lst)} legal actions")
        return lst[i]

    def apply(self, action: Any) -> np.ndarray:
        """Resolve and apply ``action`` for the seat to act.

        Returns:
            ``float32 [4]``: the reward of each seat from this step (non-zero only when a deal or
            game ends, depending on the reward mode; team-shared and zero-sum).
        Raises:
            ValueError: the action is not legal; RuntimeError: the episode is over.
        """
        r0 = self.advance(action)
        rewards = np.zeros(4, dtype=np.float32)
        if r0:
            rewards[0] = rewards[2] = r0
            rewards[1] = rewards[3] = -r0
        return rewards

    def advance(self, action: Any) -> float:
        """:meth:`apply` without the reward array (for :class:`~guandan.rl.vec.VecEnv`'s
        stepping loop): resolve and apply ``action``.

        Returns:
            The reward of seats 0 and 2 from this step (seats 1 and 3 get its negation,
            team-shared and zero-sum, R35); ``0.0`` unless an episode ended.
        Raises:
            ValueError: the action is not legal; RuntimeError: the episode is over.
        """
        if self.done:
            raise RuntimeError("the episode is over: call reset()")
        act = self.resolve(action)
        self.game.apply_unchecked(act)
        game = self.game
        value = 0.0
        if len(game.settlements) > self._n_settled:
            st = game.settlements[-1]
            self._n_settled = len(game.settlements)
            mode = self.reward_mode
            if mode == "deal":
                value = 1.0
                self.done = True
            elif mode == "levels":
                value = float(st.upgrade)
                self.done = True
            elif game.over:  # game
                value = 1.0
                self.done = True
            if value and st.winner != 0:
                value = -value
        elif game.over:
            self.done = True
        self._refresh()
        return value

    # -- research hooks ----------------------------------------------------------------------
    def hidden_hands(self) -> np.ndarray:
        """Privileged labels: ``int8 [4, 54]`` every seat's cards (for critics; never in observations)."""
        return np.asarray(self.game.deal.hands, dtype=np.int8)

    def clone(self) -> Table:
        """An independent copy (the game via :meth:`Game.clone`, fresh public state)."""
        new = Table.__new__(Table)
        new.__dict__.update(self.__dict__)
        new.game = self.game.clone()
        new._seeder = random.Random()
        new._seeder.setstate(self._seeder.getstate())
        new.pub = PublicState()
        new._refresh()
        return new

    def sample_world(self, seat: int, rng: random.Random) -> list[list[int]]:
        """Hidden hands consistent with everything public to ``seat`` (the shared sampler,
        :func:`guandan.core.worlds.sample_world`).

        Returns:
            Four hands as sorted face lists; ``seat``'s own hand is its real one, finished
            seats get ``[]``, and the hands plus the cards played are the 108-card deck.
        Raises:
            ValueError: ``seat`` is not 0..3.
        """
        from guandan.core.views import seat_view
        from guandan.core.worlds import sample_world

        return [list(h) for h in sample_world(seat_view(self.game, seat), rng)]

    def world_table(self, hands: Sequence[Sequence[int]]) -> Table:
        """A clone of this table whose current deal holds ``hands`` (e.g. from :meth:`sample_world`),
        for determinised search (play phase; the rest of the state is the real one).

        Raises:
            ValueError: a hand's size differs from the seat's card count.
        """
        from guandan.core.cards import counts_of

        new = self.clone()
        d = new.game.deal
        if [len(h) for h in hands] != list(d.n_cards):
            raise ValueError(f"hand sizes {[len(h) for h in hands]} differ from the card counts {list(d.n_cards)}")
        d.hands = [counts_of(h) for h in hands]
        d._legal = None
        new._refresh()
        return new

"""Self-play data for the value and policy networks (NumPy, no PyTorch).

A *shard* is the data of a few whole games (2 → passing A, R5; tribute and return included,
R43-R50) played by four copies of a teacher bot, saved as one ``.npz`` file:

==================  ==========================  ===============================================
array               shape, dtype                meaning
==================  ==========================  ===============================================
``v_state``         ``[N, STATE_DIM]`` float16  full deal states (:func:`~guandan.agents.nets.encode_state`)
``v_win``           ``[N]`` uint8               1 if the point-of-view seat's team won that deal (头游, R35)
``v_score``         ``[N]`` float32             that team's signed level change of the deal / 3 (R35)
``v_deal``          ``[N]`` int32               index of the deal within the shard (for splits)
``p_view``          ``[D, VIEW_DIM]`` float16   the acting seat's view (:func:`~guandan.agents.nets.encode_view`)
``p_actions``       ``[M, ACTION_DIM]`` float16 candidate actions, decision ``i`` owns rows
                                                ``p_offsets[i]:p_offsets[i+1]``
``p_offsets``       ``[D + 1]`` int64           row offsets into ``p_actions``
``p_label``         ``[D]`` int32               index of the teacher's choice within its rows
==================  ==========================  ===============================================

Policy samples are the teacher's labelled decisions: an agent with a false ``labelled``
attribute after ``act`` (expert iteration's :class:`guandan.train.expert.MixedTeacher`)
contributes no policy sample for that decision.

Value samples: each play-phase decision is recorded with probability ``value_rate`` from two
points of view, the seat to act and the next seat (one per team), so both labels appear for
every recorded state. Policy samples: every play-phase decision with at least two legal
actions; when there are more than ``max_candidates`` the teacher's choice is kept and the
others are a uniform sample (PASS is always kept when legal). The scale of both figures per
game: about 13 deals and 1,000 decisions per heuristic self-play game.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guandan.agents.base import Agent

from guandan.agents.nets import ACTION_DIM, STATE_DIM, VIEW_DIM, encode_actions, encode_state, encode_view, require_numpy
from guandan.agents.registry import make_agent
from guandan.core.match import Game
from guandan.core.plays import PASS_TYPE
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view

#: ``make_agents(game_seed) -> four agents`` (seat order).
AgentsFactory = Callable[[int], list[Agent]]

_UPGRADE = {"1-2": 3, "1-3": 2, "1-4": 1}


class NamedTeacher:
    """Four ``make_agent(name)`` copies seeded from the game seed (picklable, for worker
    processes).

    Args:
        name: an agent name of :func:`guandan.agents.base.make_agent`.
    Raises:
        ValueError: unknown agent name.
    """

    def __init__(self, name: str) -> None:
        make_agent(name, 0)
        self.name = name

    def __call__(self, game_seed: int) -> list[Agent]:
        return [make_agent(self.name, game_seed * 4 + s) for s in range(4)]


def named_agents(name: str) -> AgentsFactory:
    """:class:`NamedTeacher` (kept as a function for readability at call sites)."""
    return NamedTeacher(name)


@dataclass
class ShardStats:
    """What one shard holds: ``games``, ``deals``, ``decisions`` (all actions applied),
    ``value_samples``, ``policy_samples``, ``candidates`` (policy action rows), ``seconds``."""

    games: int = 0
    deals: int = 0
    decisions: int = 0
    value_samples: int = 0
    policy_samples: int = 0
    candidates: int = 0
    seconds: float = 0.0

    def add(self, other: ShardStats) -> None:
        """Accumulate ``other`` into this one."""
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))


@dataclass
class _Buf:
    v_state: list[Any] = field(default_factory=list)
    v_pov: list[tuple[int, int]] = field(default_factory=list)  # (deal index, pov team)
    p_view: list[Any] = field(default_factory=list)
    p_actions: list[Any] = field(default_factory=list)
    p_label: list[int] = field(default_factory=list)


def play_shard(
    make_agents: AgentsFactory,
    game_seeds: list[int],
    rules: RuleSet | None = None,
    value_rate: float = 0.25,
    max_candidates: int = 32,
    max_deals: int = 60,
    sample_seed: int = 0,
) -> tuple[dict[str, Any], ShardStats]:
    """Play one whole game per seed with the teacher bots and record samples.

    Args:
        make_agents: the teacher (see :func:`named_agents`).
        game_seeds: one seed per game (the game's ``random.Random`` and the agents' seeds).
        rules: rule set (default ``official``).
        value_rate: probability of recording a play-phase state for the value network (0-1).
        max_candidates: most candidate actions kept per policy sample (>= 2).
        max_deals: a game stops after this many deals (a safety bound).
        sample_seed: seed of the sub-sampling choices.
    Returns:
        ``(arrays, stats)``: the shard arrays (see the module docstring) and their statistics.
    Raises:
        ValueError: ``value_rate`` outside [0, 1] or ``max_candidates < 2``.
    """
    import time

    np = require_numpy()
    if not 0.0 <= value_rate <= 1.0:
        raise ValueError(f"value_rate must be in [0, 1], not {value_rate!r}")
    if max_candidates < 2:
        raise ValueError(f"max_candidates must be >= 2, not {max_candidates!r}")
    rules = rules or RuleSet.official()
    rng = random.Random(sample_seed)
    t0 = time.perf_counter()
    buf = _Buf()
    deal_outcomes: list[tuple[int, int]] = []  # per deal: (winner team, upgrade)
    stats = ShardStats()
    for gs in game_seeds:
        agents = make_agents(gs)
        game = Game(rules, seed=gs)
        stats.games += 1
        pending: list[int] = []  # value rows of the current deal
        while not game.over and len(game.settlements) < max_deals:
            n_settled = len(game.settlements)
            seat = game.to_act()
            assert seat is not None
            view = seat_view(game, seat)
            act = agents[seat].act(view)
            if view.phase == "play":
                if rng.random() < value_rate:
                    for pov in (seat, (seat + 1) % 4):
                        buf.v_state.append(encode_state(game.deal, pov, game.score.levels).astype(np.float16))
                        buf.v_pov.append((len(deal_outcomes), pov & 1))
                        pending.append(len(buf.v_state) - 1)
                legal = view.legal_actions
                # a teacher may act without labelling (expert iteration labels a sample only)
                if len(legal) >= 2 and getattr(agents[seat], "labelled", True):
                    cands = list(legal)
                    if len(cands) > max_candidates:
                        keep = [a for a in cands if a == act or a[0] == PASS_TYPE]
                        rest = [a for a in cands if not (a == act or a[0] == PASS_TYPE)]
                        keep += rng.sample(rest, max_candidates - len(keep))
                        cands = keep
                    rng.shuffle(cands)
                    buf.p_view.append(encode_view(view).astype(np.float16))
                    buf.p_actions.append(encode_actions(view, cands).astype(np.float16))
                    buf.p_label.append(cands.index(act))
            game.apply(act, seat)
            stats.decisions += 1
            if len(game.settlements) > n_settled:
                st = game.settlements[-1]
                deal_outcomes.append((st.winner, _UPGRADE.get(st.result, 1)))
                stats.deals += 1
                pending = []
        # rows of an unfinished deal (max_deals reached mid-deal cannot happen: the check is
        # between deals) are labelled by deal index; drop any without an outcome
        del pending
    n_out = len(deal_outcomes)
    rows = [i for i, (d, _t) in enumerate(buf.v_pov) if d < n_out]
    v_state = np.stack([buf.v_state[i] for i in rows]) if rows else np.zeros((0, STATE_DIM), np.float16)
    v_win = np.array([1 if deal_outcomes[buf.v_pov[i][0]][0] == buf.v_pov[i][1] else 0 for i in rows], np.uint8)
    v_score = np.array(
        [
            (1.0 if deal_outcomes[buf.v_pov[i][0]][0] == buf.v_pov[i][1] else -1.0)
            * deal_outcomes[buf.v_pov[i][0]][1] / 3.0
            for i in rows
        ],
        np.float32,
    )
    v_deal = np.array([buf.v_pov[i][0] for i in rows], np.int32)
    sizes = [len(a) for a in buf.p_actions]
    offsets = np.zeros(len(sizes) + 1, np.int64)
    offsets[1:] = np.cumsum(sizes)
    arrays = {
        "v_state": v_state,
        "v_win": v_win,
        "v_score": v_score,
        "v_deal": v_deal,
        "p_view": np.stack(buf.p_view) if buf.p_view else np.zeros((0, VIEW_DIM), np.float16),
        "p_actions": np.concatenate(buf.p_actions) if buf.p_actions else np.zeros((0, ACTION_DIM), np.float16),
        "p_offsets": offsets,
        "p_label": np.array(buf.p_label, np.int32),
    }
    stats.value_samples = int(len(rows))
    stats.policy_samples = len(buf.p_label)
    stats.candidates = int(offsets[-1])
    stats.seconds = time.perf_counter() - t0
    return arrays, stats


def save_shard(path: Path, arrays: dict[str, Any]) -> None:
    """Write a shard atomically (a temporary file renamed), so an interrupted run never leaves
    a half-written shard behind."""
    np = require_numpy()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    tmp.replace(path)


def load_shards(paths: list[Path]) -> dict[str, Any]:
    """Concatenate shards (offsets and deal indices made global).

    Raises:
        ValueError: no shard given. FileNotFoundError: a missing file.
    """
    np = require_numpy()
    if not paths:
        raise ValueError("no data shards to load")
    parts: dict[str, list[Any]] = {k: [] for k in ("v_state", "v_win", "v_score", "v_deal", "p_view",
                                                   "p_actions", "p_label", "p_offsets", "p_shard", "v_shard")}
    base_rows = 0
    deal_base = 0
    for si, p in enumerate(paths):
        with np.load(p, allow_pickle=False) as z:
            for k in ("v_state", "v_win", "v_score", "p_view", "p_actions", "p_label"):
                parts[k].append(z[k])
            parts["v_deal"].append(z["v_deal"] + deal_base)
            off = z["p_offsets"]
            parts["p_offsets"].append(off[:-1] + base_rows)
            base_rows += int(off[-1])
            deal_base += int(z["v_deal"].max()) + 1 if len(z["v_deal"]) else 0
            parts["p_shard"].append(np.full(len(z["p_label"]), si, np.int32))
            parts["v_shard"].append(np.full(len(z["v_win"]), si, np.int32))
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["p_offsets"] = np.concatenate([out["p_offsets"], np.array([base_rows], np.int64)])
    return out


def generate(
    out_dir: Path,
    make_agents: AgentsFactory,
    games: int,
    seed: int,
    games_per_shard: int = 10,
    rules: RuleSet | None = None,
    value_rate: float = 0.25,
    max_candidates: int = 32,
    progress: Callable[[int, int], None] | None = None,
    prefix: str = "shard",
    workers: int = 1,
) -> tuple[list[Path], ShardStats]:
    """Generate ``games`` self-play games into shards ``out_dir/{prefix}-NNNN.npz``; resumable.

    Shard ``k`` holds games ``k * games_per_shard ...``; their seeds come from
    ``random.Random(seed)``, so a rerun with the same arguments skips the shards already on disk
    and produces the same data as an uninterrupted run.

    Args:
        out_dir: directory (created).
        make_agents: the teacher; games: number of games (>= 1); seed: master seed.
        games_per_shard: games per file; progress: ``progress(games_done, games)``.
        workers: worker processes (1: play in this process); the data do not depend on it.
    Returns:
        ``(shard paths, statistics of the shards generated now)``.
    Raises:
        ValueError: ``games < 1`` or ``games_per_shard < 1``.
    """
    if games < 1 or games_per_shard < 1:
        raise ValueError("games and games_per_shard must be >= 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    master = random.Random(seed)
    seeds = [master.getrandbits(40) for _ in range(games)]
    paths: list[Path] = []
    stats = ShardStats()
    done = 0
    todo: list[tuple[Path, list[int]]] = []
    for k in range(0, games, games_per_shard):
        chunk = seeds[k : k + games_per_shard]
        path = out_dir / f"{prefix}-{k // games_per_shard:04d}.npz"
        paths.append(path)
        if path.exists():
            done += len(chunk)
        else:
            todo.append((path, chunk))
    if progress is not None:
        progress(done, games)
    args = [(p, make_agents, chunk, rules, value_rate, max_candidates) for p, chunk in todo]
    if workers <= 1 or len(todo) <= 1:
        results = map(_shard_job, args)
        for st in results:
            stats.add(st)
            done += st.games
            if progress is not None:
                progress(done, games)
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            for st in pool.map(_shard_job, args):
                stats.add(st)
                done += st.games
                if progress is not None:
                    progress(done, games)
    return paths, stats


def _shard_job(args: tuple[Path, AgentsFactory, list[int], RuleSet | None, float, int]) -> ShardStats:
    path, make_agents, chunk, rules, value_rate, max_candidates = args
    import json
    from dataclasses import asdict

    arrays, st = play_shard(make_agents, chunk, rules, value_rate, max_candidates, sample_seed=chunk[0])
    save_shard(path, arrays)
    path.with_suffix(".json").write_text(json.dumps(asdict(st)))
    return st


def shard_stats(paths: list[Path]) -> ShardStats:
    """Sum of the statistics saved beside each shard (``<shard>.json``; missing ones count 0)."""
    import json

    total = ShardStats()
    for p in paths:
        j = p.with_suffix(".json")
        if j.exists():
            total.add(ShardStats(**json.loads(j.read_text())))
    return total

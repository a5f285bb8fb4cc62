"""A compact Deep Monte-Carlo (DouZero-style) trainer on :mod:`guandan.rl` (PyTorch, CPU).

Method
------
One Q-network ``Q(observation) -> [471]`` scores every ``abstract`` action id (see
:mod:`guandan.rl.abstract`) from the ``default`` observation (774 floats); illegal ids are masked.
Tables are stepped in a batch: the learning seats act ε-greedily on Q, every decision
``(observation, id)`` of a learning seat is kept until its deal ends, and then labelled with
that seat's final team reward (the Monte-Carlo return, undiscounted: ``+1``/``-1`` for the
``deal`` reward, R35). Labelled samples are consumed once, in minibatches, with the squared error
``(Q(s)[a] - G)^2`` (DouZero's DMC objective). As in DouZero, the action's features enter the
network at the input next to the observation (:class:`QNet`: early fusion); the features are
those of the abstract id (type, key rank, size, full-house pair rank or tribute/return card).
No reward shaping: the only target is the deal's team reward.

Opponents: ``random`` (the default: the learning team is seats 0/2 and seats 1/3 play the
project's uniform random agent over the exact legal actions, :class:`guandan.agents.RandomAgent`;
the quickest way to beat it) or ``self`` (all four seats are learners sharing the network, as in
DouZero).

Teacher (optional, ``--teacher heuristic``): for the first ``teacher_minutes`` of training a
share of the learning seats' decisions (``teacher_start``, falling linearly to 0) is made by a
project bot instead of the ε-greedy network: the bot's play is mapped to its abstract id, and the
env realises that id canonically. These decisions are ordinary samples, labelled with the deal's
return like every other decision (a behaviour policy that visits good lines early; the network is
never fitted to the bot's choices themselves). After ``teacher_minutes`` the learners act on Q
alone. No reward shaping either way.

Evaluation (:func:`evaluate`): duplicate deals against the random agent. Deal ``i`` is the first
deal of a game seeded ``seed + i``; it is played twice, the greedy network holding seats 0/2 and
then seats 1/3 with the same cards; a deal is won when the network's team has 头游 (R35).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from guandan.agents import RandomAgent
from guandan.core.views import seat_view
from guandan.rl.abstract import N_ABSTRACT, action_id
from guandan.rl.table import Table


@dataclass
class DMCConfig:
    """Trainer options.

    Attributes:
        tables: tables stepped together (one batched forward pass per step).
        hidden: hidden layer widths of the Q-network.
        lr: Adam learning rate; ``batch_size``: samples per update.
        reuse: updates per ``batch_size`` new samples; each update draws a random minibatch from
            a ring buffer of the last ``buffer`` labelled samples (``reuse=1`` with ``buffer`` =
            ``batch_size`` is pure on-policy DMC).
        epsilon: exploration probability of the learning seats (uniform over legal ids).
        opponent: ``random`` or ``self`` (see the module docstring).
        preset: rule preset; ``seed``: seed of tables, exploration and initial weights.
        threads: ``torch.set_num_threads`` (1 leaves the other core to the tables' Python).
        teacher: ``None`` or an agent name (``heuristic``): a guide for the learning seats'
            early exploration (see the module docstring, "Teacher"); ``teacher_minutes``: the
            wall time over which the share of teacher decisions falls linearly from
            ``teacher_start`` to 0.
    """

    tables: int = 32
    hidden: tuple[int, ...] = (512, 256, 128)
    lr: float = 1e-3
    batch_size: int = 256
    reuse: int = 4
    buffer: int = 20_000
    epsilon: float = 0.1
    opponent: str = "random"
    preset: str = "aicomp"
    seed: int = 0
    threads: int = 1
    teacher: str | None = None
    teacher_start: float = 0.5
    teacher_minutes: float = 20.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.opponent not in ("random", "self"):
            raise ValueError(f"opponent must be 'random' or 'self', not {self.opponent!r}")
        if self.tables < 1 or self.batch_size < 1 or self.reuse < 1 or self.buffer < self.batch_size:
            raise ValueError("tables, batch_size and reuse must be at least 1, and buffer >= batch_size")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], not {self.epsilon}")
        if self.teacher not in (None, "heuristic", "random"):
            raise ValueError(f"teacher must be None, 'heuristic' or 'random', not {self.teacher!r}")
        if not 0.0 <= self.teacher_start <= 1.0 or self.teacher_minutes < 0:
            raise ValueError("teacher_start must be in [0, 1] and teacher_minutes >= 0")


ID_FEATURES = 60


def id_features() -> np.ndarray:
    """``float32 [471, 60]`` features of each abstract id, from :data:`guandan.rl.abstract.ID_TABLE`:
    action type one-hot (13: ten play types, pass, tribute, return), key rank one-hot (15),
    cards / 10 (1), full-house pair rank or tribute/return face rank one-hot (15), joker flag (1),
    and the cards it takes per rank 0..14, / 4 (15: e.g. a full house t/p: 3 at t, 2 at p; a
    straight: 1 at each rank of its window, R10), so that the first layer can relate an action
    to the hand's ``hand_ranks`` block."""
    from guandan.core.plays import PLATE_WINDOWS, PLAY_TYPES, STRAIGHT_WINDOWS, TUBE_WINDOWS
    from guandan.rl.abstract import ID_TABLE

    types = list(PLAY_TYPES) + ["pass", "tribute", "return"]
    f = np.zeros((N_ABSTRACT, ID_FEATURES), np.float32)
    for i, (t, r, n, x) in enumerate(ID_TABLE):
        f[i, types.index(t)] = 1.0
        if r is not None:
            f[i, 13 + r] = 1.0
        f[i, 28] = n / 10.0
        if x is not None:
            xr = x if t == "full_house" else (x >> 2 if x < 52 else x - 39)
            f[i, 29 + xr] = 1.0
        f[i, 44] = 1.0 if (r is not None and r >= 13) else 0.0
        per_rank = f[i, 45:60]
        if t in ("single", "pair", "triple", "bomb", "tribute", "return"):
            per_rank[r] += n
        elif t == "full_house":
            per_rank[r] += 3
            per_rank[x] += 2
        elif t in ("straight", "straight_flush"):
            per_rank[list(STRAIGHT_WINDOWS[r])] += 1
        elif t == "tube":
            per_rank[list(TUBE_WINDOWS[r])] += 2
        elif t == "plate":
            per_rank[list(PLATE_WINDOWS[r])] += 3
        elif t == "joker_bomb":
            per_rank[13] += 2
            per_rank[14] += 2
        per_rank /= 4.0
    return f


class QNet(nn.Module):  # type: ignore[misc]
    """``Q(observation, abstract id)``, DouZero-style: the id enters through its features
    (:func:`id_features`) at the input, next to the observation (early fusion: every hidden layer
    sees both, so the value of an action can depend on the whole hand).

    The first layer is split into an observation part and an id part, ``W [obs; f(id)] =
    W_o obs + W_a f(id)``, so scoring all legal ids of a row costs one observation projection
    plus a table lookup (the same function as concatenating the inputs).

    ``forward(obs [B, D]) -> [B, 471]`` scores every id; :meth:`pairs` scores chosen
    ``(row, id)`` pairs only (training); :meth:`legal_q` scores only the unmasked ids.

    Args:
        obs_size: ``D``; hidden: hidden layer widths (at least one); n_actions: ids scored.
    """

    arch = "fused-2"

    def __init__(self, obs_size: int, hidden: tuple[int, ...] = (512, 256, 128), n_actions: int = N_ABSTRACT) -> None:
        super().__init__()
        if not hidden:
            raise ValueError("QNet needs at least one hidden layer")
        self.register_buffer("feats", torch.from_numpy(id_features()[:n_actions]))
        self.obs_in = nn.Linear(obs_size, hidden[0])
        self.act_in = nn.Linear(self.feats.shape[1], hidden[0], bias=False)
        layers: list[nn.Module] = [nn.ReLU()]
        prev = hidden[0]
        for h in hidden[1:]:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        layers.append(nn.Linear(prev, 1))
        self.rest = nn.Sequential(*layers)

    def pairs(self, obs: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Q of ``(obs[k], ids[k])`` for each k: ``[B]``."""
        x = self.obs_in(obs) + self.act_in(self.feats[ids])
        return self.rest(x).squeeze(1)  # type: ignore[no-any-return]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        h = self.obs_in(obs)
        a = self.act_in(self.feats)
        return self.rest(h.unsqueeze(1) + a.unsqueeze(0)).squeeze(2)  # type: ignore[no-any-return]

    def legal_q(self, obs: torch.Tensor, mask: np.ndarray) -> np.ndarray:
        """``[B, 471]`` Q-values with ``-inf`` where ``mask`` is false (only legal pairs computed)."""
        rows, ids = np.nonzero(mask)
        out = np.full(mask.shape, -np.inf, np.float32)
        if len(rows):
            with torch.no_grad():
                h = self.obs_in(obs)
                a = self.act_in(self.feats[torch.from_numpy(ids)])
                q = self.rest(h[torch.from_numpy(rows)] + a).squeeze(1)
            out[rows, ids] = q.numpy()
        return out


def masked_greedy(q: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, the legal id with the highest Q (``q``: ``[B, A]``, ``mask``: bool ``[B, A]``)."""
    return np.where(mask, q, -np.inf).argmax(axis=1)


class DMCTrainer:
    """Collect self-play (or vs-random) deals and fit the Q-network; see the module docstring.

    Args:
        config: :class:`DMCConfig`.
    """

    def __init__(self, config: DMCConfig | None = None) -> None:
        self.cfg = cfg = config or DMCConfig()
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(cfg.threads)
        self.tables = [Table(cfg.preset, "abstract", "default", "deal", seed=cfg.seed * 1000 + i)
                       for i in range(cfg.tables)]
        self.obs_size = self.tables[0].obs_size
        self.model = QNet(self.obs_size, cfg.hidden)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        self.rng = np.random.default_rng(cfg.seed)
        self.opp_rng = random.Random(cfg.seed + 77)
        self.learners = (0, 1, 2, 3) if cfg.opponent == "self" else (0, 2)
        self.teacher = None
        if cfg.teacher is not None:
            from guandan.agents import make_agent

            self.teacher = make_agent(cfg.teacher, cfg.seed + 5)
        #: share of the learning seats' decisions the teacher makes now (see ``train``)
        self.teacher_p = cfg.teacher_start if cfg.teacher is not None else 0.0
        B = cfg.tables
        self._obs = np.zeros((B, self.obs_size), np.float32)
        self._mask = np.zeros((B, N_ABSTRACT), bool)
        self._traj: list[list[list[tuple[np.ndarray, int]]]] = [[[] for _ in range(4)] for _ in range(B)]
        self._buf_obs: list[np.ndarray] = []
        self._buf_act: list[int] = []
        self._buf_ret: list[float] = []
        # replay ring of labelled samples
        self._ring_obs = np.zeros((cfg.buffer, self.obs_size), np.float32)
        self._ring_act = np.zeros(cfg.buffer, np.int64)
        self._ring_ret = np.zeros(cfg.buffer, np.float32)
        self._ring_n = 0
        self._ring_pos = 0
        self.taught_s = 0.0  # training seconds so far (the teacher's schedule across resumes)
        self.updates = 0
        self.decisions = 0
        self.deals = 0
        self.losses: list[float] = []

    # -- data ----------------------------------------------------------------------------------
    def step_tables(self) -> None:
        """One decision on every table (batched Q for the learning seats); finished deals are
        labelled and moved to the sample buffer, and their tables reset."""
        learn_rows = []
        for b, t in enumerate(self.tables):
            s = t.to_act
            if s in self.learners:
                t.observe(s, self._obs[b])  # type: ignore[arg-type]
                t.mask(self._mask[b])
                learn_rows.append(b)
        acts: dict[int, int] = {}
        if learn_rows:
            rows = np.array(learn_rows)
            with torch.no_grad():
                q = self.model.legal_q(torch.from_numpy(self._obs[rows]), self._mask[rows])
            greedy = q.argmax(axis=1)
            explore = self.rng.random(len(rows)) < self.cfg.epsilon
            taught = self.rng.random(len(rows)) < self.teacher_p
            for k, b in enumerate(learn_rows):
                if taught[k] and self.teacher is not None:
                    t = self.tables[b]
                    play = self.teacher.act(seat_view(t.game, t.to_act))  # type: ignore[arg-type]
                    a = action_id(tuple(play), t.game.deal.level)  # type: ignore[arg-type]
                elif explore[k]:
                    a = int(self.rng.choice(np.flatnonzero(self._mask[b])))
                else:
                    a = int(greedy[k])
                acts[b] = a
        for b, t in enumerate(self.tables):
            s = t.to_act
            assert s is not None
            if b in acts:
                self._traj[b][s].append((self._obs[b].copy(), acts[b]))
                r = t.apply(acts[b])
            else:
                # uniform over the exact legal actions, as RandomAgent (without building a view)
                r = t.apply(self.opp_rng.choice(t.legal()))
            self.decisions += 1
            if t.done:
                self.deals += 1
                for seat in self.learners:
                    for o, a in self._traj[b][seat]:
                        self._buf_obs.append(o)
                        self._buf_act.append(a)
                        self._buf_ret.append(float(r[seat]))
                    self._traj[b][seat] = []
                t.reset()

    def update(self) -> float | None:
        """When ``batch_size`` new labelled samples are buffered: move them into the replay ring
        and make ``reuse`` gradient steps on random minibatches of the ring. Returns the mean
        loss, or ``None`` when fewer samples are waiting."""
        cfg = self.cfg
        n = cfg.batch_size
        if len(self._buf_act) < n:
            return None
        pos = self._ring_pos
        idx = (np.arange(n) + pos) % cfg.buffer
        self._ring_obs[idx] = np.stack(self._buf_obs[:n])
        self._ring_act[idx] = self._buf_act[:n]
        self._ring_ret[idx] = self._buf_ret[:n]
        del self._buf_obs[:n], self._buf_act[:n], self._buf_ret[:n]
        self._ring_pos = (pos + n) % cfg.buffer
        self._ring_n = min(self._ring_n + n, cfg.buffer)
        total = 0.0
        for k in range(cfg.reuse):
            pick = idx if k == 0 else self.rng.integers(0, self._ring_n, n)
            total += self.fit_batch(torch.from_numpy(self._ring_obs[pick]), torch.from_numpy(self._ring_act[pick]),
                                    torch.from_numpy(self._ring_ret[pick]))
        return total / cfg.reuse

    def fit_batch(self, obs: torch.Tensor, act: torch.Tensor, ret: torch.Tensor) -> float:
        """One Adam step on ``(Q(obs)[act] - ret)^2``; returns the loss."""
        q = self.model.pairs(obs, act)
        loss = ((q - ret) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        v = float(loss.item())
        self.losses.append(v)
        return v

    def collect_samples(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Step until at least ``n`` labelled samples are buffered, and take them (for tests and
        offline fitting): ``(obs [n, D], act [n], ret [n])``."""
        while len(self._buf_act) < n:
            self.step_tables()
        obs = torch.from_numpy(np.stack(self._buf_obs[:n]))
        act = torch.tensor(self._buf_act[:n])
        ret = torch.tensor(self._buf_ret[:n], dtype=torch.float32)
        del self._buf_obs[:n], self._buf_act[:n], self._buf_ret[:n]
        return obs, act, ret

    def train(self, seconds: float, on_tick: Callable[[DMCTrainer], None] | None = None,
              tick_s: float = 1.0) -> None:
        """Collect and learn for ``seconds`` of wall time, calling ``on_tick`` about every ``tick_s``."""
        start = time.monotonic()
        end = start + seconds
        next_tick = start + tick_s
        cfg = self.cfg
        while time.monotonic() < end:
            if cfg.teacher is not None:
                elapsed = time.monotonic() - start + self.taught_s
                span = cfg.teacher_minutes * 60.0
                self.teacher_p = cfg.teacher_start * max(0.0, 1.0 - elapsed / span) if span > 0 else 0.0
            self.step_tables()
            while self.update() is not None:
                pass
            if on_tick is not None and time.monotonic() >= next_tick:
                on_tick(self)
                next_tick = time.monotonic() + tick_s
        self.taught_s += time.monotonic() - start

    # -- checkpoints ---------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write a checkpoint (weights, optimiser, counters, config) to ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        torch.save({
            "model": self.model.state_dict(), "opt": self.opt.state_dict(), "config": asdict(self.cfg),
            "updates": self.updates, "decisions": self.decisions, "deals": self.deals, "taught_s": self.taught_s,
            "obs_version": self.tables[0].encoder.version, "obs_size": self.obs_size, "arch": QNet.arch,
        }, tmp)
        tmp.replace(path)

    def load(self, path: str | Path) -> None:
        """Restore weights, optimiser and counters from a checkpoint written by :meth:`save`.

        Raises:
            ValueError: the checkpoint is for another observation layout, or the file is not a
                readable checkpoint of this trainer (truncated, foreign, missing keys).
        """
        try:
            ck = torch.load(Path(path), map_location="cpu", weights_only=False)
        except Exception as e:  # noqa: BLE001 - UnpicklingError, EOFError, RuntimeError (zip), ...
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise ValueError(f"{path}: not a readable checkpoint ({first})") from None
        missing = [k for k in ("model", "opt", "updates", "decisions", "deals") if not isinstance(ck, dict) or k not in ck]
        if missing:
            raise ValueError(f"{path}: not a checkpoint of guandan train-rl (missing {', '.join(missing)})")
        _check_arch(ck, path)
        if ck.get("obs_version") != self.tables[0].encoder.version:
            raise ValueError(f"checkpoint is for observation {ck.get('obs_version')!r}, "
                             f"not {self.tables[0].encoder.version!r}")
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["opt"])
        self.updates, self.decisions, self.deals = ck["updates"], ck["decisions"], ck["deals"]
        self.taught_s = float(ck.get("taught_s", 0.0))


def _check_arch(ck: Any, path: str | Path) -> None:
    """Raise ``ValueError`` when checkpoint ``ck`` holds another network layout than :class:`QNet`."""
    arch = ck.get("arch", "late-fusion-0") if isinstance(ck, dict) else None
    if arch != QNet.arch:
        raise ValueError(f"{path}: checkpoint of network {arch!r}, this version loads {QNet.arch!r} (retrain)")


class TorchPolicy:
    """A picklable batch policy ``(obs [B, D], mask [B, 471]) -> ids [B]`` (greedy on a QNet), for
    :mod:`guandan.rl.scale` workers (Ray actors rebuild the network from the state dict).

    Args:
        path: a checkpoint written by :meth:`DMCTrainer.save`.
    """

    def __init__(self, path: str | Path) -> None:
        ck = torch.load(Path(path), map_location="cpu", weights_only=False)
        _check_arch(ck, path)
        self.obs_size = int(ck["obs_size"])
        self.hidden = tuple(ck["config"]["hidden"])
        self.state = ck["model"]
        self._model: QNet | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"obs_size": self.obs_size, "hidden": self.hidden, "state": self.state, "_model": None}

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self._model is None:
            torch.set_num_threads(1)
            self._model = QNet(self.obs_size, self.hidden)
            self._model.load_state_dict(self.state)
            self._model.eval()
        q = self._model.legal_q(torch.from_numpy(np.ascontiguousarray(obs)), mask)
        return q.argmax(axis=1)


def load_policy(path: str | Path) -> QNet:
    """The Q-network of a checkpoint (eval mode)."""
    ck = torch.load(Path(path), map_location="cpu", weights_only=False)
    _check_arch(ck, path)
    model = QNet(ck["obs_size"], tuple(ck["config"]["hidden"]))
    model.load_state_dict(ck["model"])
    model.eval()
    return model


def evaluate(model: QNet, deals: int = 100, seed: int = 10_000, preset: str = "aicomp",
             progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Duplicate deals of the greedy network against :class:`~guandan.agents.RandomAgent`.

    Args:
        model: the Q-network.
        deals: number of distinct deals (each is played twice, seats swapped).
        seed: deal ``i`` is the first deal of a game seeded ``seed + i``.
        progress: called with the number of deals done so far.
    Returns:
        ``{"deals", "games_played", "won", "win_rate", "both_won", "both_lost"}``: ``win_rate`` =
        deals won / (2 × deals); ``both_won``/``both_lost``: duplicate pairs won/lost in both seatings.
    """
    opp = RandomAgent(seed=seed)
    won = both_won = both_lost = 0
    obs = np.zeros((1, 774), np.float32)
    mask = np.zeros((1, N_ABSTRACT), bool)
    model.eval()
    for i in range(deals):
        results = []
        for team in (0, 1):
            t = Table(preset, "abstract", "default", "deal")
            t.new_game(seed + i)
            if obs.shape[1] != t.obs_size:
                obs = np.zeros((1, t.obs_size), np.float32)
            while not t.done:
                s = t.to_act
                assert s is not None
                if (s & 1) == team:
                    t.observe(s, obs[0])
                    t.mask(mask[0])
                    with torch.no_grad():
                        q = model.legal_q(torch.from_numpy(obs), mask)
                    r = t.apply(int(q[0].argmax()))
                else:
                    r = t.apply(tuple(opp.act(seat_view(t.game, s))))
            win = r[team] > 0
            results.append(win)
            won += int(win)
        both_won += int(all(results))
        both_lost += int(not any(results))
        if progress is not None:
            progress(i + 1)
    return {"deals": deals, "games_played": 2 * deals, "won": won, "win_rate": won / (2 * deals),
            "both_won": both_won, "both_lost": both_lost}


def random_policy_baseline(deals: int = 50, seed: int = 10_000) -> float:
    """Win rate of an untrained network (for comparison): evaluate a freshly initialised QNet."""
    torch.manual_seed(seed)
    return float(evaluate(QNet(774), deals, seed)["win_rate"])


__all__ = ["DMCConfig", "DMCTrainer", "QNet", "TorchPolicy", "evaluate", "load_policy", "masked_greedy", "random_policy_baseline"]

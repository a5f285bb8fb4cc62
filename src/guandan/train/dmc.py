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

Schedules: over ``decay_minutes`` of training the learning rate falls linearly from ``lr`` to
``lr_end`` and the exploration probability from ``epsilon`` to ``epsilon_end`` (late samples then
come from a nearly greedy policy, so their returns estimate the greedy policy's values, and
smaller steps stop the greedy policy from oscillating between evaluations). Training time
excludes what ``on_tick`` takes (evaluations, checkpoints).

Processes (``actors``): DouZero's actor/learner split on CPU. The learner process steps its own
tables and makes the gradient steps; each actor process (spawned, one PyTorch thread) steps
another ``tables`` tables with the learner's network, whose parameters live in shared memory
(``Module.share_memory``: Adam updates them in place, the actors read them without locks), and
sends its labelled samples through a queue; the learner puts them in the same buffer as its own.
The teacher share and ε follow the learner's schedule. With ``actors=1`` the two processes use
the two cores of a small machine.

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
            training time over which the share of teacher decisions falls linearly from
            ``teacher_start`` to 0.
        lr_end, epsilon_end: ``None`` (constant ``lr`` / ``epsilon``) or the values reached,
            linearly, after ``decay_minutes`` of training (and kept after that).
        actors: extra actor processes (0: one process). Each actor steps its own ``tables``
            tables with the same exploration and teacher schedule, reading the learner's weights
            from shared memory (Hogwild-style reads, as DouZero's actors), and sends its labelled
            samples to the learner, which also steps its own tables between updates (see
            "Processes" in the module docstring).
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
    lr_end: float | None = None
    epsilon_end: float | None = None
    decay_minutes: float = 60.0
    actors: int = 0
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
        if self.epsilon_end is not None and not 0.0 <= self.epsilon_end <= 1.0:
            raise ValueError(f"epsilon_end must be in [0, 1], not {self.epsilon_end}")
        if not self.lr > 0 or (self.lr_end is not None and not self.lr_end > 0):
            raise ValueError(f"lr and lr_end must be > 0, not {self.lr} and {self.lr_end}")
        if not self.decay_minutes > 0:
            raise ValueError(f"decay_minutes must be > 0, not {self.decay_minutes}")
        if self.actors < 0:
            raise ValueError(f"actors must be >= 0, not {self.actors}")

    def schedule(self, trained_s: float) -> tuple[float, float, float]:
        """``(teacher share, epsilon, learning rate)`` after ``trained_s`` seconds of training:
        each moves linearly from its start value to its end value (teacher: 0 after
        ``teacher_minutes``; ``epsilon_end`` / ``lr_end`` after ``decay_minutes``; constant when
        the end value is ``None``) and stays there."""
        span = self.teacher_minutes * 60.0
        teach = 0.0
        if self.teacher is not None:
            teach = self.teacher_start * max(0.0, 1.0 - trained_s / span) if span > 0 else 0.0
        f = min(1.0, max(0.0, trained_s / (self.decay_minutes * 60.0)))
        eps = self.epsilon if self.epsilon_end is None else self.epsilon + (self.epsilon_end - self.epsilon) * f
        lr = self.lr if self.lr_end is None else self.lr + (self.lr_end - self.lr) * f
        return teach, eps, lr


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

    def __init__(self, config: DMCConfig | None = None, *, actor: int = 0, model: QNet | None = None) -> None:
        self.cfg = cfg = config or DMCConfig()
        self.actor = actor
        seed = cfg.seed + 7919 * actor  # actor k > 0: its own tables and exploration stream
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(1 if actor else cfg.threads)
        self.tables = [Table(cfg.preset, "abstract", "default", "deal", seed=seed * 1000 + i)
                       for i in range(cfg.tables)]
        self.obs_size = self.tables[0].obs_size
        self.model = model if model is not None else QNet(self.obs_size, cfg.hidden)
        self.rng = np.random.default_rng(seed)
        self.opp_rng = random.Random(seed + 77)
        self.epsilon = cfg.epsilon
        self._procs: list[Any] = []
        self.learners = (0, 1, 2, 3) if cfg.opponent == "self" else (0, 2)
        self.teacher = None
        if cfg.teacher is not None:
            from guandan.agents import make_agent

            self.teacher = make_agent(cfg.teacher, seed + 5)
        #: share of the learning seats' decisions the teacher makes now (see ``train``)
        self.teacher_p = cfg.teacher_start if cfg.teacher is not None else 0.0
        B = cfg.tables
        self._obs = np.zeros((B, self.obs_size), np.float32)
        self._mask = np.zeros((B, N_ABSTRACT), bool)
        self._traj: list[list[list[tuple[np.ndarray, int]]]] = [[[] for _ in range(4)] for _ in range(B)]
        self._buf_obs: list[np.ndarray] = []
        self._buf_act: list[int] = []
        self._buf_ret: list[float] = []
        self.taught_s = 0.0  # training seconds so far (the schedules across resumes)
        self.run_s = 0.0  # training seconds of the current (or last) train() call
        self.updates = 0
        self.decisions = 0
        self.deals = 0
        self.losses: list[float] = []
        if actor:
            return  # an actor collects only: no optimiser, no replay ring
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        # replay ring of labelled samples
        self._ring_obs = np.zeros((cfg.buffer, self.obs_size), np.float32)
        self._ring_act = np.zeros(cfg.buffer, np.int64)
        self._ring_ret = np.zeros(cfg.buffer, np.float32)
        self._ring_n = 0
        self._ring_pos = 0

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
            explore = self.rng.random(len(rows)) < self.epsilon
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

    def set_schedule(self, trained_s: float) -> None:
        """Set the teacher share, ε and the learning rate for ``trained_s`` seconds of training
        (:meth:`DMCConfig.schedule`)."""
        self.teacher_p, self.epsilon, lr = self.cfg.schedule(trained_s)
        if not self.actor:
            for g in self.opt.param_groups:
                g["lr"] = lr

    def train(self, seconds: float, on_tick: Callable[[DMCTrainer], None] | None = None,
              tick_s: float = 1.0) -> None:
        """Collect and learn for ``seconds`` of training time, calling ``on_tick`` about every
        ``tick_s`` seconds. Time spent inside ``on_tick`` (an evaluation, a checkpoint) is not
        training time: it neither counts towards ``seconds`` nor advances the schedules, and the
        actor processes (``cfg.actors``) wait meanwhile."""
        if self.cfg.actors and not self._procs:
            self._start_actors()
        start = time.monotonic()
        paused = 0.0  # seconds spent in on_tick
        next_tick = start + tick_s
        self.set_schedule(self.taught_s)
        self._pause_actors(False)
        try:
            while (trained := time.monotonic() - start - paused) < seconds:
                self.run_s = trained
                self.set_schedule(self.taught_s + trained)
                self.step_tables()
                self._drain_actors()
                while self.update() is not None:
                    pass
                if on_tick is not None and time.monotonic() >= next_tick:
                    t0 = time.monotonic()
                    self._pause_actors(True)
                    on_tick(self)
                    self._pause_actors(False)
                    t1 = time.monotonic()
                    paused += t1 - t0
                    next_tick = t1 + tick_s
        finally:
            self._pause_actors(True)
        self.run_s = time.monotonic() - start - paused
        self.taught_s += self.run_s

    # -- actor processes -----------------------------------------------------------------------
    def _start_actors(self) -> None:
        """Start ``cfg.actors`` actor processes (spawned, one PyTorch thread each) that read
        this trainer's weights from shared memory and send labelled samples back."""
        import torch.multiprocessing as tmp

        ctx = tmp.get_context("spawn")
        self.model.share_memory()  # Adam updates the parameters in place: actors see every step
        self._queue = ctx.Queue(maxsize=64)
        self._run = ctx.Event()
        self._stop = ctx.Event()
        self._shared = ctx.Array("d", 2)  # teacher share, epsilon
        self._shared[0], self._shared[1] = self.teacher_p, self.epsilon
        self._run.set()
        for k in range(1, self.cfg.actors + 1):
            p = ctx.Process(target=_actor_main, args=(asdict(self.cfg), k, self.model, self._queue, self._run,
                                                      self._stop, self._shared), daemon=True)
            p.start()
            self._procs.append(p)

    def _pause_actors(self, pause: bool) -> None:
        if self._procs:
            if pause:
                self._run.clear()
            else:
                self._shared[0], self._shared[1] = self.teacher_p, self.epsilon
                self._run.set()

    def _drain_actors(self) -> None:
        """Move the actors' labelled samples into the sample buffer and count their work.

        Raises:
            RuntimeError: an actor process has ended (its traceback went to stderr).
        """
        if not self._procs:
            return
        import queue

        self._shared[0], self._shared[1] = self.teacher_p, self.epsilon
        while True:
            try:
                obs, act, ret, decisions, deals = self._queue.get_nowait()
            except queue.Empty:
                break
            self._buf_obs.extend(obs)
            self._buf_act.extend(act.tolist())
            self._buf_ret.extend(ret.tolist())
            self.decisions += decisions
            self.deals += deals
        for p in self._procs:
            if p.exitcode is not None:
                code = p.exitcode
                self.close()
                raise RuntimeError(f"a train-rl actor process ended (exit code {code}); see its traceback above")

    def close(self) -> None:
        """Stop the actor processes (if any); a later :meth:`train` starts new ones."""
        if not self._procs:
            return
        self._stop.set()
        self._run.set()
        import queue

        for p in self._procs:
            while p.is_alive():
                try:  # a blocked put() must be able to finish
                    self._queue.get(timeout=0.1)
                except queue.Empty:
                    pass
                p.join(0.1)
        self._procs = []

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

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


def _actor_main(cfg: dict[str, Any], index: int, model: QNet, out: Any, run: Any, stop: Any, shared: Any) -> None:
    """Body of actor process ``index``: step ``cfg["tables"]`` tables with the shared ``model``
    and send ``(obs [n, D], act [n], ret [n], decisions, deals)`` chunks of labelled samples
    to ``out``; waits while ``run`` is clear, ends when ``stop`` is set."""
    from guandan.runtime.gctune import tune_gc

    cfg = dict(cfg, hidden=tuple(cfg["hidden"]))
    tr = DMCTrainer(DMCConfig(**cfg), actor=index, model=model)
    tune_gc()
    chunk = max(64, tr.cfg.batch_size // 2)
    d0 = n0 = 0
    while not stop.is_set():
        if not run.is_set():
            run.wait(0.5)
            continue
        tr.teacher_p, tr.epsilon = shared[0], shared[1]
        tr.step_tables()
        if len(tr._buf_act) >= chunk:
            out.put((np.stack(tr._buf_obs), np.array(tr._buf_act, np.int64), np.array(tr._buf_ret, np.float32),
                     tr.decisions - d0, tr.deals - n0))
            tr._buf_obs, tr._buf_act, tr._buf_ret = [], [], []
            d0, n0 = tr.decisions, tr.deals


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
        ``{"deals", "games_played", "won", "win_rate", "ci95", "both_won", "both_lost"}``:
        ``win_rate`` = deals won / (2 × deals); ``ci95``: its 95% Wilson interval ``[low, high]``
        over the ``2 × deals`` games (as ``guandan arena``); ``both_won``/``both_lost``: duplicate
        pairs won/lost in both seatings.
    """
    from guandan.evaluation.arena import wilson

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
            "ci95": list(wilson(won, 2 * deals)), "both_won": both_won, "both_lost": both_lost}


def random_policy_baseline(deals: int = 50, seed: int = 10_000) -> float:
    """Win rate of an untrained network (for comparison): evaluate a freshly initialised QNet."""
    torch.manual_seed(seed)
    return float(evaluate(QNet(774), deals, seed)["win_rate"])


__all__ = ["DMCConfig", "DMCTrainer", "QNet", "TorchPolicy", "evaluate", "load_policy", "masked_greedy", "random_policy_baseline"]

"""Learned evaluation: feature encoders and NumPy inference for the value and policy networks.

Two small multilayer perceptrons (ReLU hidden layers) score Guandan positions:

* the **value network** reads the *full deal state* (all four hands, as search sees a sampled
  deal) from one seat's point of view and predicts (a) the probability that this seat's team
  gets 头游 in the deal (the deal winner, R35) and (b) the team's signed level change of the
  deal divided by 3 (+1..+3 when the team wins as 1-4/1-3/1-2, R35; the opposite when it
  loses). It is trained on self-play outcomes (``guandan train value``) and lets search stop a
  rollout early and score it with less noise than one playout.
* the **policy network** scores each legal action from what one seat may see
  (:class:`~guandan.core.views.SeatView`) and picks the highest; trained by imitation of a
  teacher bot (``guandan train policy``), it serves as the candidate and rollout policy of
  search and, alone, as the fast ``policy`` bot.

Inference needs NumPy only (``pip install -e '.[bots]' in the pyguandan checkout``); PyTorch is used for training
only (``[train]`` extra). The shipped weights lie next to this module in ``weights/``
(``value.npz``, ``policy.npz``; see ``weights/MODEL_CARD.md``).

Feature layouts
---------------
Seats are *relative* to the point-of-view seat ``p``: relative seat ``r = (s - p) % 4``, so 0
is ``p``, 1 its next seat (an opponent), 2 its partner, 3 the other opponent. "Strength
position" means the rank's place in the deal's level order (R9): ``STRENGTH[level][rank]``,
0 = lowest (2, or 3 when 2 is the level) ... 12 = the level rank, 13 small joker, 14 big joker;
the two wilds (heart of the level rank, R8) are counted apart from the strength positions.
The "key" of a play is its comparison key (:func:`guandan.core.plays.play_key`) scaled to
[0, 1]: strength position / 14 for single/pair/triple/full_house, top rank / 12 for
straight/tube/plate, ladder power / 1000 for bombs (R23-R26).

State vector (value network), ``float32[STATE_DIM]`` with ``STATE_DIM = 340``:

====================  =====  ==========================================================
offset                size   meaning
====================  =====  ==========================================================
``72*r + 0``          54     relative seat ``r``'s hand, count per face / 2 (face order)
``72*r + 54``         15     its hand by strength position (wilds excluded) / 4
``72*r + 69``         1      its wilds / 2
``72*r + 70``         1      its cards left / 27
``72*r + 71``         1      1 if it has gone out
``288``               13     level one-hot (rank index 0..12 = 2..A)
``301``               11     type of the play to beat: one-hot over PLAY_TYPES (10);
                             index 10 = none (leading, or not the play phase)
``312``               1      key of the play to beat (0 when none)
``313``               1      cards in the play to beat / 10
``314``               4      relative seat of the play to beat, one-hot (0 when none)
``318``               4      relative seat to act, one-hot (0 when the deal is over)
``322``               15     cards played so far this deal by strength position / 8 (wilds
                             counted at the level rank's position)
``337``               1      passes since the play to beat / 3
``338``               2      team levels: own team's, other team's (rank index / 12)
====================  =====  ==========================================================

View vector (policy network, one seat's view), ``float32[VIEW_DIM]`` with ``VIEW_DIM = 124``:

====================  =====  ==========================================================
``0``                 54     own hand, count per face / 2
``54``                15     own hand by strength position (wilds excluded) / 4
``69``                1      own wilds / 2
``70``                15     unseen cards (held by the other seats) by strength position / 8
                             (wilds counted at the level rank's position)
``85``                3      cards left of relative seats 1, 2, 3 / 27 (a hidden count,
                             ``le10`` option, reads as 11/27)
``88``                4      relative seats 0-3 gone out
``92``                13     level one-hot
``105``               11     type of the play to beat (as state offset 301)
``116``               1      key of the play to beat
``117``               1      cards in the play to beat / 10
``118``               4      relative seat of the play to beat, one-hot
``122``               2      team levels: own, other (rank index / 12)
====================  =====  ==========================================================

Action vector (one candidate action), ``float32[ACTION_DIM]`` with ``ACTION_DIM = 48``:

====================  =====  ==========================================================
``0``                 11     type one-hot over PLAY_TYPES (10); index 10 = pass
``11``                1      key of the play (0 for pass)
``12``                1      cards played / 10
``13``                1      wilds used / 2
``14``                15     cards played by strength position (wilds excluded) / 4
``29``                1      cards left after the action / 27
``30``                1      1 if the action empties the hand (goes out)
``31``                1      1 if the action is a bomb (bomb, straight_flush, joker_bomb)
``32``                15     hand after the action by strength position (wilds excl.) / 4
``47``                1      1 if the action plays over the partner's play (not a pass)
====================  =====  ==========================================================

Tribute and return actions (R45, R47) are not scored by the policy network: the agents using
it leave those two decisions to the heuristic.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guandan.core.cards import FACE_RANK, N_FACES, wild_face
from guandan.core.plays import BOMB_TYPES, PASS_TYPE, PLAY_TYPES, SEQUENCE_TYPES, STRENGTH, PlayT, play_key

if TYPE_CHECKING:  # pragma: no cover
    from guandan.core.deal import Deal
    from guandan.core.match import Game
    from guandan.core.views import SeatView

STATE_DIM = 340
VIEW_DIM = 124
ACTION_DIM = 48
SEAT_BLOCK = 72

#: Index of each play type in the type one-hots; index 10 is pass (actions) or none (state).
TYPE_INDEX: dict[str, int] = {t: i for i, t in enumerate(PLAY_TYPES)}
NO_TYPE = 10

#: Directory of the shipped weights.
WEIGHTS_DIR = Path(__file__).with_name("weights")

NUMPY_MISSING = (
    "the learned bots need NumPy: install it with  pip install -e '.[bots]' in the pyguandan checkout  "
    "(or pip install numpy)"
)


def require_numpy() -> Any:
    """Import and return NumPy.

    Raises:
        ImportError: NumPy is not installed; the message says how to install it.
    """
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - exercised in a subprocess test
        raise ImportError(NUMPY_MISSING) from e
    return numpy


# --------------------------------------------------------------------------------------------
# encoders
# --------------------------------------------------------------------------------------------
def play_key_norm(play: PlayT, level: int) -> float:
    """The comparison key of a play scaled to [0, 1] (see the module docstring); 0 for pass."""
    t = play[0]
    if t == PASS_TYPE or t not in TYPE_INDEX:
        return 0.0
    k = play_key(play, level)
    if t in BOMB_TYPES:
        return k / 1000.0
    if t in SEQUENCE_TYPES:
        return k / 12.0
    return k / 14.0


def _strength_counts(counts: Sequence[int], level: int, out: Any, offset: int, scale: float) -> None:
    """Add per-face ``counts`` (wilds excluded) by strength position into ``out[offset:offset+15]``."""
    st = STRENGTH[level]
    w = wild_face(level)
    for f in range(N_FACES):
        n = counts[f]
        if n and f != w:
            out[offset + st[FACE_RANK[f]]] += n * scale


def _top_block(out: Any, off: int, top: PlayT | None, top_seat: int | None, pov: int, level: int) -> None:
    """Type one-hot (11), key, size, relative seat one-hot (4) of the play to beat."""
    if top is None or top[0] not in TYPE_INDEX:
        out[off + NO_TYPE] = 1.0
        return
    out[off + TYPE_INDEX[top[0]]] = 1.0
    out[off + 11] = play_key_norm(top, level)
    out[off + 12] = len(top[2]) / 10.0
    if top_seat is not None:
        out[off + 13 + (top_seat - pov) % 4] = 1.0


def encode_state(deal: Deal, pov: int, levels: Sequence[int] | None = None, out: Any = None) -> Any:
    """Encode the full state of ``deal`` from seat ``pov``'s point of view (value network input).

    Args:
        deal: a :class:`~guandan.core.deal.Deal` (all four hands are read: use it on the true
            deal for training and on sampled deals in search).
        pov: the point-of-view seat 0-3; its team is "own" in the layout.
        levels: team levels ``[team02, team13]`` (rank indices); default: both at the deal's level.
        out: optional ``float32[STATE_DIM]`` array to fill (it is zeroed first).
    Returns:
        ``numpy.ndarray`` of shape ``(STATE_DIM,)`` = ``(340,)``, dtype float32; layout in the
        module docstring.
    Raises:
        ValueError: ``pov`` is not a seat 0-3.
        ImportError: NumPy is missing.
    """
    np = require_numpy()
    if pov not in (0, 1, 2, 3):
        raise ValueError(f"pov must be a seat 0-3, not {pov!r}")
    x = np.zeros(STATE_DIM, dtype=np.float32) if out is None else out
    if out is not None:
        x[:] = 0.0
    level = deal.level
    w = wild_face(level)
    st = STRENGTH[level]
    finished = set(deal.finished)
    for s in range(4):
        r = (s - pov) % 4
        base = SEAT_BLOCK * r
        hand = deal.hands[s]
        for f in range(N_FACES):
            n = hand[f]
            if n:
                x[base + f] = n * 0.5
                if f == w:
                    x[base + 69] = n * 0.5
                else:
                    x[base + 54 + st[FACE_RANK[f]]] += n * 0.25
        x[base + 70] = deal.n_cards[s] / 27.0
        if s in finished:
            x[base + 71] = 1.0
    x[288 + level] = 1.0
    top = deal.top if deal.phase == "play" else None
    _top_block(x, 301, top, deal.top_seat, pov, level)
    turn = deal.to_act()
    if turn is not None:
        x[318 + (turn - pov) % 4] = 1.0
    for _s, a in deal.history:
        if a[0] in TYPE_INDEX:
            for f in a[2]:
                x[322 + st[FACE_RANK[f]]] += 0.125
    x[337] = deal.passes / 3.0 if top is not None else 0.0
    lv = (level, level) if levels is None else levels
    x[338] = lv[pov & 1] / 12.0
    x[339] = lv[1 - (pov & 1)] / 12.0
    return x


def encode_game_state(game: Game, pov: int) -> Any:
    """:func:`encode_state` of ``game``'s current deal with the game's team levels."""
    return encode_state(game.deal, pov, game.score.levels)


def encode_view(view: SeatView) -> Any:
    """Encode a seat's view (policy network input).

    Args:
        view: a :class:`~guandan.core.views.SeatView`.
    Returns:
        ``numpy.ndarray`` of shape ``(VIEW_DIM,)`` = ``(124,)``, float32; layout in the module
        docstring.
    Raises:
        ImportError: NumPy is missing.
    """
    np = require_numpy()
    x = np.zeros(VIEW_DIM, dtype=np.float32)
    level = view.level
    w = wild_face(level)
    st = STRENGTH[level]
    pov = view.seat
    unseen = [2] * N_FACES
    for f in view.hand:
        unseen[f] -= 1
        x[f] += 0.5
        if f == w:
            x[69] += 0.5
        else:
            x[54 + st[FACE_RANK[f]]] += 0.25
    for _s, a in view.history:
        if a[0] in TYPE_INDEX:
            for f in a[2]:
                unseen[f] -= 1
    for f in range(N_FACES):
        n = unseen[f]
        if n > 0:
            x[70 + st[FACE_RANK[f]]] += n * 0.125
    for r in (1, 2, 3):
        c = view.card_counts[(pov + r) % 4]
        x[84 + r] = (11 if c is None else c) / 27.0
    for s in view.finished:
        x[88 + (s - pov) % 4] = 1.0
    x[92 + level] = 1.0
    top = view.top if view.phase == "play" else None
    _top_block(x, 105, top, view.top_seat, pov, level)
    x[122] = view.levels[pov & 1] / 12.0
    x[123] = view.levels[1 - (pov & 1)] / 12.0
    return x


def encode_actions(view: SeatView, actions: Sequence[PlayT]) -> Any:
    """Encode candidate play-phase actions (pass or plays) of ``view``'s seat.

    Args:
        view: the acting seat's view (its hand and the trick are read).
        actions: the candidates, each a legal ``(type, rank, cards)`` of the play phase.
    Returns:
        ``numpy.ndarray`` of shape ``(len(actions), ACTION_DIM)`` = ``(n, 48)``, float32; layout
        in the module docstring.
    Raises:
        ValueError: an action is a tribute or return (not scored by the policy network).
        ImportError: NumPy is missing.
    """
    np = require_numpy()
    n = len(actions)
    x = np.zeros((n, ACTION_DIM), dtype=np.float32)
    level = view.level
    w = wild_face(level)
    st = STRENGTH[level]
    hand_st = [0] * 15
    for f in view.hand:
        if f != w:
            hand_st[st[FACE_RANK[f]]] += 1
    n_hand = len(view.hand)
    partner_top = view.top is not None and view.top_seat == (view.seat + 2) % 4
    for i, a in enumerate(actions):
        t = a[0]
        row = x[i]
        if t == PASS_TYPE:
            row[NO_TYPE] = 1.0
            row[29] = n_hand / 27.0
            for k in range(15):
                row[32 + k] = hand_st[k] * 0.25
            continue
        ti = TYPE_INDEX.get(t)
        if ti is None:
            raise ValueError(f"the policy network scores play-phase actions only, not {t!r}")
        row[ti] = 1.0
        cards = a[2]
        row[11] = play_key_norm(a, level)
        row[12] = len(cards) / 10.0
        after = hand_st[:]
        nw = 0
        for f in cards:
            if f == w:
                nw += 1
            else:
                p = st[FACE_RANK[f]]
                row[14 + p] += 0.25
                after[p] -= 1
        row[13] = nw * 0.5
        left = n_hand - len(cards)
        row[29] = left / 27.0
        row[30] = 1.0 if left == 0 else 0.0
        row[31] = 1.0 if t in BOMB_TYPES else 0.0
        for k in range(15):
            row[32 + k] = after[k] * 0.25
        row[47] = 1.0 if partner_top else 0.0
    return x


# --------------------------------------------------------------------------------------------
# networks (NumPy inference)
# --------------------------------------------------------------------------------------------
@dataclass
class MLP:
    """A ReLU multilayer perceptron held as NumPy arrays.

    Attributes:
        weights: per layer ``float32[in, out]``; ``biases``: per layer ``float32[out]``.
        meta: metadata stored with the weights (``kind``, ``version``, training facts).
    """

    weights: list[Any]
    biases: list[Any]
    meta: dict[str, Any]

    def forward(self, x: Any) -> Any:
        """Apply the network: ReLU after every layer but the last.

        Args:
            x: ``float32[batch, in]`` (or ``[in]``).
        Returns:
            ``float32[batch, out]`` (or ``[out]``).
        """
        np = require_numpy()
        h = x
        last = len(self.weights) - 1
        for i, (wt, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ wt + b
            if i < last:
                h = np.maximum(h, 0.0)
        return h

    @property
    def n_params(self) -> int:
        """Number of weights and biases."""
        return int(sum(w.size for w in self.weights) + sum(b.size for b in self.biases))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the network to a ``.npz`` file (float32 arrays ``w0, b0, w1, b1, ...`` plus a
        JSON string ``meta``)."""
        import json

        np = require_numpy()
        arrays: dict[str, Any] = {}
        for i, (wt, b) in enumerate(zip(self.weights, self.biases)):
            arrays[f"w{i}"] = np.asarray(wt, dtype=np.float32)
            arrays[f"b{i}"] = np.asarray(b, dtype=np.float32)
        arrays["meta"] = np.array(json.dumps(self.meta, sort_keys=True))
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str], kind: str | None = None) -> MLP:
        """Read a network written by :meth:`save`.

        Args:
            path: the ``.npz`` file.
            kind: expected ``meta['kind']`` (``'value'`` or ``'policy'``), or ``None`` for any.
        Raises:
            FileNotFoundError: no such file.
            ValueError: not a network file, a layer shape mismatch, or the wrong kind.
            ImportError: NumPy is missing.
        """
        import json

        np = require_numpy()
        with np.load(path, allow_pickle=False) as z:
            names = set(z.files)
            if "meta" not in names or "w0" not in names:
                raise ValueError(f"{path}: not a pyguandan network file (no meta/w0 arrays)")
            meta = json.loads(str(z["meta"]))
            ws, bs = [], []
            i = 0
            while f"w{i}" in names:
                ws.append(z[f"w{i}"].astype(np.float32))
                bs.append(z[f"b{i}"].astype(np.float32))
                i += 1
        for i in range(1, len(ws)):
            if ws[i].shape[0] != ws[i - 1].shape[1]:
                raise ValueError(f"{path}: layer {i} expects {ws[i].shape[0]} inputs, gets {ws[i - 1].shape[1]}")
        if kind is not None and meta.get("kind") != kind:
            raise ValueError(f"{path}: a {meta.get('kind')!r} network, expected {kind!r}")
        return cls(ws, bs, meta)


class ValueNet:
    """The value network over full deal states.

    Args:
        mlp: a network with ``STATE_DIM`` inputs and 2 outputs (win logit, level score).
    Raises:
        ValueError: the network's input or output size is wrong.
    """

    def __init__(self, mlp: MLP) -> None:
        if mlp.weights[0].shape[0] != STATE_DIM or mlp.weights[-1].shape[1] != 2:
            raise ValueError(
                f"a value network maps {STATE_DIM} inputs to 2 outputs, not "
                f"{mlp.weights[0].shape[0]} to {mlp.weights[-1].shape[1]}"
            )
        self.mlp = mlp

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> ValueNet:
        """Load from ``path`` (default: the shipped ``weights/value.npz``)."""
        return cls(MLP.load(path or WEIGHTS_DIR / "value.npz", kind="value"))

    def predict(self, states: Any) -> tuple[Any, Any]:
        """Evaluate encoded states.

        Args:
            states: ``float32[batch, STATE_DIM]``.
        Returns:
            ``(win, score)``: ``float32[batch]`` probability that the point-of-view seat's team
            wins the deal (头游), and ``float32[batch]`` its expected signed level change / 3.
        """
        np = require_numpy()
        out = self.mlp.forward(np.asarray(states, dtype=np.float32).reshape(-1, STATE_DIM))
        win = 1.0 / (1.0 + np.exp(-np.clip(out[:, 0], -30.0, 30.0)))
        return win, out[:, 1]

    def win_probability(self, deal: Deal, pov: int, levels: Sequence[int] | None = None) -> float:
        """Probability that ``pov``'s team wins ``deal`` (头游) from its current full state.

        A finished deal returns 1.0 or 0.0 exactly (R35).
        """
        if deal.result is not None:
            return 1.0 if deal.result.winner_team == (pov & 1) else 0.0
        win, _ = self.predict(encode_state(deal, pov, levels)[None, :])
        return float(win[0])

    def evaluate(self, deal: Deal, pov: int, levels: Sequence[int] | None = None) -> float:
        """Search target of a full state for ``pov``'s team, in [-1, 1]: ``2 * win - 1`` plus a
        level tie-break of ``0.1 * score``, clipped (deal won first, levels second)."""
        if deal.result is not None:
            won = deal.result.winner_team == (pov & 1)
            up = {"1-2": 3, "1-3": 2, "1-4": 1}[deal.result.result] / 3.0
            return max(-1.0, min(1.0, (1.0 if won else -1.0) * (1.0 + 0.1 * up) / 1.1))
        win, score = self.predict(encode_state(deal, pov, levels)[None, :])
        v = (2.0 * float(win[0]) - 1.0 + 0.1 * float(score[0])) / 1.1
        return max(-1.0, min(1.0, v))


class PolicyNet:
    """The policy network over (view, candidate action) pairs: one logit per candidate.

    Args:
        mlp: a network with ``VIEW_DIM + ACTION_DIM`` inputs and 1 output.
    Raises:
        ValueError: the network's input or output size is wrong.
    """

    def __init__(self, mlp: MLP) -> None:
        if mlp.weights[0].shape[0] != VIEW_DIM + ACTION_DIM or mlp.weights[-1].shape[1] != 1:
            raise ValueError(
                f"a policy network maps {VIEW_DIM + ACTION_DIM} inputs to 1 output, not "
                f"{mlp.weights[0].shape[0]} to {mlp.weights[-1].shape[1]}"
            )
        self.mlp = mlp
        # the view part of the first layer is shared by all candidates: computed once
        self._w0v = mlp.weights[0][:VIEW_DIM]
        self._w0a = mlp.weights[0][VIEW_DIM:]

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> PolicyNet:
        """Load from ``path`` (default: the shipped ``weights/policy.npz``)."""
        return cls(MLP.load(path or WEIGHTS_DIR / "policy.npz", kind="policy"))

    def logits_from_features(self, view_x: Any, action_x: Any) -> Any:
        """Logits of encoded candidates.

        Args:
            view_x: ``float32[VIEW_DIM]``; action_x: ``float32[n, ACTION_DIM]``.
        Returns:
            ``float32[n]``.
        """
        np = require_numpy()
        m = self.mlp
        h = np.maximum(view_x @ self._w0v + action_x @ self._w0a + m.biases[0], 0.0)
        last = len(m.weights) - 1
        for i in range(1, last + 1):
            h = h @ m.weights[i] + m.biases[i]
            if i < last:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def logits(self, view: SeatView, actions: Sequence[PlayT] | None = None) -> Any:
        """Logits of ``actions`` (default: ``view.legal_actions``), ``float32[n]``.

        Raises:
            ValueError: a tribute or return action (see :func:`encode_actions`).
        """
        acts = view.legal_actions if actions is None else actions
        return self.logits_from_features(encode_view(view), encode_actions(view, acts))

    def probabilities(self, view: SeatView, actions: Sequence[PlayT] | None = None) -> Any:
        """Softmax of :meth:`logits`, ``float64[n]`` summing to 1."""
        np = require_numpy()
        z = self.logits(view, actions).astype(np.float64)
        z = np.exp(z - z.max())
        return z / z.sum()

    def rank(self, view: SeatView, actions: Sequence[PlayT] | None = None, k: int | None = None) -> list[PlayT]:
        """The actions sorted by decreasing logit (the best ``k`` when ``k`` is given)."""
        np = require_numpy()
        acts = list(view.legal_actions if actions is None else actions)
        order = np.argsort(-self.logits(view, acts), kind="stable")
        if k is not None:
            order = order[:k]
        return [acts[int(i)] for i in order]

    def best(self, view: SeatView, actions: Sequence[PlayT] | None = None) -> PlayT:
        """The highest-scoring action (the first on ties).

        Raises:
            ValueError: no action to choose from.
        """
        acts = view.legal_actions if actions is None else actions
        if not acts:
            raise ValueError(f"seat {view.seat} has no legal action")
        if len(acts) == 1:
            return acts[0]
        return acts[int(self.logits(view, acts).argmax())]


_SHIPPED: dict[str, Any] = {}


def shipped_value_net() -> ValueNet:
    """The shipped value network (loaded once per process).

    Raises:
        ImportError: NumPy is missing. FileNotFoundError: the weights are not installed.
    """
    if "value" not in _SHIPPED:
        _SHIPPED["value"] = ValueNet.load()
    return _SHIPPED["value"]  # type: ignore[no-any-return]


def shipped_policy_net() -> PolicyNet:
    """The shipped policy network (loaded once per process); errors as :func:`shipped_value_net`."""
    if "policy" not in _SHIPPED:
        _SHIPPED["policy"] = PolicyNet.load()
    return _SHIPPED["policy"]  # type: ignore[no-any-return]


class PolicyAgent:
    """The policy network alone as a fast bot (name ``policy``): plays the legal action with
    the highest logit; tribute and return (R45, R47) are left to the heuristic.

    Args:
        seed: accepted for the common agent interface; the choice is a pure function of the view.
        net: a :class:`PolicyNet` (default: the shipped weights).
    Raises:
        ImportError: NumPy is missing (with the install command).
    """

    name = "policy"

    def __init__(self, seed: int | None = None, net: PolicyNet | None = None) -> None:
        from .heuristic import HeuristicAgent

        self.net = net if net is not None else shipped_policy_net()
        self._heuristic = HeuristicAgent(seed)

    def act(self, view: SeatView) -> PlayT:
        """Choose one of ``view.legal_actions``.

        Raises:
            ValueError: the view offers no legal action.
        """
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal action")
        if len(legal) == 1:
            return legal[0]
        if view.phase != "play":
            return self._heuristic.act(view)
        return self.net.best(view, legal)


def numpy_available() -> bool:
    """Whether NumPy can be imported (the learned bots need it)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


__all__ = [
    "STATE_DIM", "VIEW_DIM", "ACTION_DIM", "encode_state", "encode_game_state", "encode_view",
    "encode_actions", "play_key_norm", "MLP", "ValueNet", "PolicyNet", "PolicyAgent",
    "shipped_value_net", "shipped_policy_net", "numpy_available", "require_numpy", "WEIGHTS_DIR",
]

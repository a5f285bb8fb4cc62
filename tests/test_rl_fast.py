"""The fast paths of guandan.rl against their references (issue 9 speed work):

* the ``abstract`` mask computed from rank counts (:mod:`guandan.rl.fastmask`) equals grouping the
  engine's card-level legal actions, and the canonical realisation of every unmasked id is the
  same play, over random positions of every preset (R8-R27 through the move generator);
* the cached ``default`` encoder equals the from-scratch encoder at every step of random deals,
  for every seat, under every preset;
* ``VecEnv``'s process backend gives the same trajectories as the sync backend (abstract and
  candidates modes, features included).
"""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra (numpy, pettingzoo, gymnasium)")

from guandan.core.cards import parse_cards  # noqa: E402
from guandan.core.movegen import legal_plays  # noqa: E402
from guandan.core.rules import PRESET_NAMES  # noqa: E402
from guandan.rl import abstract, fastmask  # noqa: E402
from guandan.rl.table import Table  # noqa: E402
from guandan.rl.vec import VecEnv  # noqa: E402


def _counts(faces):
    c = [0] * 54
    for f in faces:
        c[f] += 1
    return c


def _check_position(hand, level, top, fhjp=True):
    legal = legal_plays(hand, level, top, fhjp)
    slow = abstract.group_actions(legal, level)
    if top is not None:
        slow = {abstract.PASS_ID: [], **slow}
    ids = fastmask.legal_ids(fastmask.HandShapes(hand, level, fhjp), hand, top)
    assert len(ids) == len(set(ids))
    assert set(ids) == set(slow), (sorted(set(ids) - set(slow)), sorted(set(slow) - set(ids)), top)
    for i, group in slow.items():
        if i == abstract.PASS_ID:
            continue
        fast_group = fastmask.play_group(i, hand, level, fhjp)
        assert sorted(fast_group) == sorted(group), abstract.describe(i)
        assert abstract.canonical_choice(fast_group, hand, level) == abstract.canonical_choice(group, hand, level)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_fast_mask_equals_grouped_legal_actions_in_random_play(preset):
    """Every play-phase position of random deals (random unmasked ids) under ``preset``."""
    t = Table(preset=preset, seed=17, reference=True)
    fhjp = t.rules.full_house_joker_pair
    rng = random.Random(5)
    mask = np.zeros(t.n_actions, bool)
    checked = 0
    for _ in range(1200):
        if t.done:
            t.reset()
        d = t.game.deal
        if d.phase == "play":
            _check_position(list(d.hands[d.turn]), d.level, d.top, fhjp)
            fast = t.clone()  # the same decision through the fast path
            fast.reference = False
            m2 = np.zeros(t.n_actions, bool)
            t.mask(mask)
            fast.mask(m2)
            assert (mask == m2).all()
            checked += 1
        t.mask(mask)
        ids = np.flatnonzero(mask)
        t.apply(int(ids[rng.randrange(len(ids))]))
    assert checked > 1000


@pytest.mark.parametrize("fhjp", [True, False])
def test_fast_mask_on_random_hands_with_wilds_and_every_kind_of_table(fhjp):
    """Random hands of 1-27 cards (two wilds forced in half of them) at every level, leading and
    following plays of every type (tables drawn from another hand's legal plays)."""
    rng = random.Random(11)
    deck = [f for f in range(54) for _ in range(2)]
    for k in range(400):
        level = k % 13
        rng.shuffle(deck)
        n = rng.randint(1, 27)
        faces = deck[:n]
        if k % 2:
            w = level * 4 + 1
            faces = [f for f in faces if f != w][: n - 2] + [w, w]
        hand = _counts(faces)
        _check_position(hand, level, None, fhjp)
        other = _counts(deck[27:54])
        tops = legal_plays(other, level, None, fhjp)
        for top in rng.sample(tops, min(6, len(tops))):
            _check_position(hand, level, top, fhjp)


def test_fast_mask_known_position():
    """3-7 of spades at level 2 (the wild is 2H, R8): a straight flush (R19, id top 7), never a
    plain straight, also when the wild could stand for one of the cards (AMB-27: five suited
    consecutive cards, natural or completed by wilds, are a straight flush); with a 7 of
    diamonds added, the mixed-suit selection may be the plain straight 3-7."""
    level = 0
    sf_3_7 = abstract.SF_BASE + 5 - 3  # top rank index 5 = 7
    straight_3_7 = abstract.STRAIGHT_BASE + 5 - 3
    for text, straight in (("3S 4S 5S 6S 7S", False), ("3S 4S 5S 6S 7S 2H", False), ("3S 4S 5S 6S 7S 7D", True)):
        hand = _counts(parse_cards(text))
        ids = set(fastmask.legal_ids(fastmask.HandShapes(hand, level), hand, None))
        assert sf_3_7 in ids, text
        assert (straight_3_7 in ids) == straight, text
        _check_position(hand, level, None)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_cached_encoder_equals_from_scratch_encoder_at_every_step(preset):
    t = Table(preset=preset, seed=23)
    enc = t.encoder
    rng = random.Random(1)
    a = np.zeros(t.obs_size, np.float32)
    b = np.zeros(t.obs_size, np.float32)
    mask = np.zeros(t.n_actions, bool)
    for _ in range(1000):
        if t.done:
            t.reset()
        for seat in range(4):
            hand = t.game.deal.hands[seat]
            enc.encode(t.pub, seat, hand, a)
            enc.encode_reference(t.pub, seat, hand, b)
            assert (a == b).all(), (seat, np.flatnonzero(a != b))
        t.mask(mask)
        ids = np.flatnonzero(mask)
        t.apply(int(ids[rng.randrange(len(ids))]))


def test_reference_table_and_fast_table_play_the_same_game():
    """Same seed, same random choices: the fast and reference paths give the same observations,
    masks, realised plays and rewards at every step."""
    fast, ref = Table(seed=3), Table(seed=3, reference=True)
    rng = random.Random(9)
    o1, o2 = np.zeros(fast.obs_size, np.float32), np.zeros(fast.obs_size, np.float32)
    m1, m2 = np.zeros(fast.n_actions, bool), np.zeros(fast.n_actions, bool)
    for _ in range(2000):
        if fast.done:
            fast.reset()
            ref.reset()
        s = fast.to_act
        assert s == ref.to_act
        fast.observe(s, o1)
        ref.observe(s, o2)
        fast.mask(m1)
        ref.mask(m2)
        assert (o1 == o2).all() and (m1 == m2).all()
        ids = np.flatnonzero(m1)
        i = int(ids[rng.randrange(len(ids))])
        assert fast.resolve(i) == ref.resolve(i)
        assert (fast.apply(i) == ref.apply(i)).all()


@pytest.mark.parametrize("kwargs", [{}, {"action_mode": "candidates", "max_candidates": 48}])
def test_vecenv_process_backend_gives_the_sync_trajectories(kwargs):
    rows = 5
    traces = []
    for backend in ("sync", "process"):
        with VecEnv(rows, backend=backend, n_workers=2, seed=4, **kwargs) as vec:
            obs, mask, seat = vec.reset()
            rng = np.random.default_rng(2)
            trace = []
            for _ in range(250):
                feats = vec.features() if kwargs else None
                a = vec.random_actions(mask, rng)
                trace.append((obs.copy(), mask.copy(), seat.copy(), None if feats is None else feats.copy()))
                obs, mask, seat, rew, done = vec.step(a)
                trace.append((rew.copy(), done.copy()))
            traces.append(trace)
    for x, y in zip(*traces):
        for u, v in zip(x, y):
            assert (u is None and v is None) or np.array_equal(u, v)


def test_vecenv_candidate_features_describe_the_candidates():
    """Row k of a table's features are the candidate's 54 card counts and its type one-hot;
    rows past the legal actions are zero (masked)."""
    with VecEnv(3, seed=8, action_mode="candidates", max_candidates=64) as vec:
        obs, mask, seat = vec.reset()
        rng = np.random.default_rng(0)
        for _ in range(60):
            f = vec.features()
            assert f.shape == (3, 64, 84)
            assert not f[~mask].any()
            assert (f[mask][:, 54:67].sum(axis=1) == 1).all()
            for b, t in enumerate(vec._block.tables):
                for k, a in enumerate(t.candidates()):
                    assert f[b, k, :54].sum() == len(a[2])
            obs, mask, seat, _, _ = vec.step(vec.random_actions(mask, rng))
    with VecEnv(2, seed=1) as vec:
        vec.reset()
        with pytest.raises(ValueError, match="candidates"):
            vec.features()


def test_default_encoders_share_one_read_only_hand_matrix():
    """Tables in one process share the encoder's constant matrix (not a copy per table), and no
    encoder can change it for the others."""
    from guandan.rl.encoders import make_encoder

    a, b = make_encoder("default"), make_encoder("default")
    assert a._dense is b._dense and not a._dense.flags.writeable
    # level index 7 (the 9s): the 9 of hearts (face 7 * 4 + 1) is a wild (R8), not counted in
    # hand_ranks; the 9 of spades (face 28) is
    assert a._dense[7, 29, 54 + 7] == 0.0 and a._dense[7, 28, 54 + 7] == 1.0

"""guandan.rl: PettingZoo API, seeds, rewards, abstract ids, encoders, privacy, research hooks.

Rules cited: R2/R3 (seats and teams), R8 (wilds), R10 (straight windows), R19/R21 (shapes),
R33/R35 (deal end, 头游's team wins, upgrades 3/2/1), R37 (passing the target ends the game),
R44-R47 (tribute and return are decisions), R50 (what is public).
"""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra (numpy, pettingzoo, gymnasium)")
pytest.importorskip("pettingzoo", reason="guandan.rl needs the [rl] extra")

import guandan.rl as rl  # noqa: E402
from guandan.core.cards import parse_cards  # noqa: E402
from guandan.core.match import Game  # noqa: E402
from guandan.core.rules import PRESET_NAMES  # noqa: E402
from guandan.rl import abstract  # noqa: E402
from guandan.rl.aec import AGENTS, GuandanAEC  # noqa: E402
from guandan.rl.encoders import DanZeroEncoder, DefaultEncoder  # noqa: E402
from guandan.rl.public import PublicState  # noqa: E402
from guandan.rl.table import Table  # noqa: E402


# --- PettingZoo API -------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["abstract", "candidates", "cards"])
def test_pettingzoo_api_test(mode):
    from pettingzoo.test import api_test

    api_test(rl.env(action_mode=mode, max_candidates=64 if mode == "candidates" else 512), num_cycles=200)


def test_pettingzoo_api_test_danzero_levels():
    from pettingzoo.test import api_test

    api_test(rl.env(obs="danzero", reward="levels"), num_cycles=200)


def test_pettingzoo_seed_test():
    from pettingzoo.test import seed_test

    seed_test(lambda: rl.env(), num_cycles=200)


def _random_trajectory(seed, n):
    e = rl.env()
    e.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = []
    for agent in e.agent_iter(max_iter=n):
        obs, r, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        a = int(rng.choice(legal))
        out.append((agent, a, obs["observation"].sum(), r))
        e.step(a)
    return out


def test_same_seed_same_trajectory_and_different_seeds_differ():
    a = _random_trajectory(7, 150)
    assert a == _random_trajectory(7, 150)
    assert a != _random_trajectory(8, 150)


def test_spaces_and_agents():
    e = rl.env()
    e.reset(seed=1)
    assert e.possible_agents == ["seat_0", "seat_1", "seat_2", "seat_3"]
    assert e.action_space("seat_0").n == abstract.N_ABSTRACT == 471
    assert e.observation_space("seat_2")["observation"].shape == (774,)
    obs = e.observe(e.agent_selection)
    assert obs["observation"].dtype == np.float32 and obs["observation"].shape == (774,)
    assert obs["action_mask"].shape == (471,) and obs["action_mask"].any()
    other = AGENTS[(AGENTS.index(e.agent_selection) + 1) % 4]
    assert not e.observe(other)["action_mask"].any()  # not to act: nothing unmasked
    assert e.infos[e.agent_selection]["obs_version"] == "default-1"


def test_bad_options_raise_clear_errors():
    with pytest.raises(ValueError, match="action_mode"):
        Table(action_mode="bogus")
    with pytest.raises(ValueError, match="reward"):
        Table(reward="points")
    with pytest.raises(ValueError, match="encoder"):
        Table(obs="nope")
    t = Table(seed=3)
    mask = np.zeros(t.n_actions, bool)
    t.mask(mask)
    bad = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match="masked"):
        t.apply(bad)


# --- rewards ------------------------------------------------------------------------------------
def _play_episode(e, rng):
    """Random play of one episode through the AEC API; returns (cumulative reward per agent as
    seen by last(), the agent that acted last, number of steps)."""
    got = {a: 0.0 for a in AGENTS}
    last_actor = None
    steps = 0
    for agent in e.agent_iter(max_iter=100_000):
        obs, r, term, trunc, _ = e.last()
        got[agent] += r
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
        last_actor = agent
        steps += 1
    return got, last_actor, steps


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("reward", ["deal", "levels"])
def test_deal_rewards_match_settlement_every_preset(preset, reward):
    """Each episode is one deal; the team of 头游 gets +1 (deal) or +upgrade (levels, R35), the
    other team the negative; every seat, including the three that did not act last, sees it."""
    e = rl.raw_env(preset=preset, reward=reward)
    rng = np.random.default_rng(11)
    e.reset(seed=5)
    saw_tribute = False
    for episode in range(4):
        if episode:
            e.reset()
        game = e.table.game
        n_before = len(game.settlements)
        if game.deal.phase == "tribute":
            saw_tribute = True
        got, last_actor, steps = _play_episode(e, rng)
        assert steps > 0
        st = e.table.game.settlements[n_before]
        value = 1.0 if reward == "deal" else float(st.upgrade)
        for i, a in enumerate(AGENTS):
            want = value if (i & 1) == st.winner else -value
            assert got[a] == want, (a, got, st)
        assert sum(got.values()) == 0.0
        quiet = [a for a in AGENTS if a != last_actor]
        assert all(got[a] != 0.0 for a in quiet)
        assert len(e.table.game.settlements) == n_before + 1
    assert saw_tribute, "no tribute deal in four episodes: the test does not cover R44-R47 decisions"


@pytest.mark.parametrize("preset", [
    p if p in ("aicomp", "official") else pytest.param(p, marks=pytest.mark.slow) for p in PRESET_NAMES
])
def test_game_reward_is_paid_once_at_game_end(preset):
    """reward="game": 0 after every deal, +1/-1 when a team passes the target (R37)."""
    e = rl.raw_env(preset=preset, reward="game")
    e.reset(seed=21)
    rng = np.random.default_rng(2)
    got, last_actor, steps = _play_episode(e, rng)
    game = e.table.game
    assert game.over and game.winner is not None
    assert len(game.settlements) >= 2
    for i, a in enumerate(AGENTS):
        assert got[a] == (1.0 if (i & 1) == game.winner else -1.0)


def test_tribute_and_return_are_decisions_with_ids():
    """A deal after a 1-4 or 1-3 result starts with tribute (R44): the mask holds tribute ids only,
    then return ids (R47)."""
    t = Table(seed=4)
    rng = np.random.default_rng(0)
    phases = set()
    for _ in range(20_000):
        if t.done:
            t.reset()
        mask = np.zeros(t.n_actions, bool)
        t.mask(mask)
        ids = np.flatnonzero(mask)
        ph = t.game.phase
        if ph == "tribute":
            assert ids.min() >= abstract.TRIBUTE_BASE and ids.max() < abstract.RETURN_BASE
        elif ph == "return":
            assert ids.min() >= abstract.RETURN_BASE
        phases.add(ph)
        if {"tribute", "return"} <= phases:
            break
        t.apply(int(rng.choice(ids)))
    assert {"tribute", "return", "play"} <= phases


# --- abstract ids ------------------------------------------------------------------------------
def test_abstract_table_layout():
    assert abstract.ID_TABLE[abstract.PASS_ID][0] == "pass"
    assert abstract.describe(1) == "single 2" and abstract.describe(15) == "single BJ"
    assert abstract.describe(abstract.full_house_id(11, 0)) == "full_house t=K p=2"
    assert abstract.describe(abstract.BOMB_BASE + 13 * 6 + 12) == "bomb 10xA"
    assert abstract.describe(abstract.STRAIGHT_BASE) == "straight 5"  # A-2-3-4-5 (R10)
    assert abstract.describe(abstract.TRIBUTE_BASE + 53) == "tribute BJ"
    ids = {abstract.full_house_id(t, p) for t in range(13) for p in range(15) if p != t}
    assert ids == set(range(abstract.FULL_HOUSE_BASE, abstract.STRAIGHT_BASE))


def test_every_unmasked_id_is_legal_and_every_legal_action_has_an_unmasked_id():
    t = Table(seed=9)
    rng = np.random.default_rng(1)
    decisions = 0
    while decisions < 1500:
        if t.done:
            t.reset()
        mask = np.zeros(t.n_actions, bool)
        t.mask(mask)
        legal = t.legal()
        level = t.game.deal.level
        for a in legal:
            assert mask[abstract.action_id(a, level)], a
        for i in np.flatnonzero(mask):
            act = t.resolve(int(i))
            assert act in legal
            typ, rank, size, extra = abstract.ID_TABLE[i]
            assert act[0] == typ and len(act[2]) == size or typ == "pass"
            if typ not in ("joker_bomb", "pass"):
                assert act[1] == rank
        decisions += 1
        t.apply(int(rng.choice(np.flatnonzero(mask))))


def _table_with_hands(hands, leader=0, obs="default"):
    t = Table(seed=0, obs=obs)
    t.game = Game(t.rules, seed=0, hands=[list(parse_cards(h)) for h in hands], first_leader=leader)
    t._start_episode()
    return t


def test_canonical_choice_prefers_no_wild_then_intact_straight_flush():
    # level 2: the wild is 2H (R8). Seat 0 holds 5S..9S (a natural straight flush), 9D, 5C 5D, and 2H.
    t = _table_with_hands(["5S 6S 7S 8S 9S 9D 5C 5D 2H KC", "3C", "3D", "4C"])
    # pair of 5: 5C 5D (no wild, keeps the straight flush) rather than 5S 5C or 5x + 2H
    assert t.resolve(abstract.PAIR_BASE + 3)[2] == parse_cards("5C 5D")
    # single 9: 9D keeps the straight flush 5S-9S intact
    assert t.resolve(abstract.SINGLE_BASE + 7)[2] == parse_cards("9D")
    # single of the level rank 2: the wild itself is the only card
    assert t.resolve(abstract.SINGLE_BASE + 0)[2] == parse_cards("2H")
    # the straight flush 5-9 is realised without the wild
    assert t.resolve(abstract.SF_BASE + 4)[2] == parse_cards("5S 6S 7S 8S 9S")
    # a straight 5-9 that is not the flush: one of 5C/5D for 5 (no wild), breaking it either way
    st = t.resolve(abstract.STRAIGHT_BASE + 4)
    assert parse_cards("2H")[0] not in st[2] and len(st[2]) == 5 and st[0] == "straight"


# --- encoders ----------------------------------------------------------------------------------
def test_default_encoder_decodes_a_known_position():
    t = _table_with_hands(["3S 3H 4D 2H", "5C 5D 6S", "7S 8S", "9C BJ"], leader=0)
    t.apply(("pair", 1, parse_cards("3S 3H")))  # seat 0 leads a pair of 3
    enc = DefaultEncoder()
    out = np.zeros(enc.size, np.float32)
    t.observe(1, out)  # seat 1 must answer
    f = enc.decode(out)
    assert f["hand"][parse_cards("5C")[0]] == 1 and f["hand"].sum() == 3
    assert f["hand_ranks"][3] == 2 and f["hand_ranks"][4] == 1  # two 5s, one 6
    assert f["wilds"].tolist() == [1, 0, 0]
    played = f["played"].reshape(4, 54)
    assert played[3, 4] == 1 and played[3, 5] == 1  # relative seat 3 (seat 0, 上家) played 3S 3H
    assert played[:3].sum() == 0
    n = f["n_cards"].reshape(4, 29)
    assert n[0].argmax() == 3 and n[3].argmax() == 2 and n[2].argmax() == 2 and n[1].argmax() == 2
    assert f["top_cards"][4] == 1 and f["top_cards"][5] == 1
    assert f["top_type"][1] == 1 and f["top_rank"][1] == 1 and f["top_seat"][3] == 1
    tl = f["trick_last"].reshape(3, 56)
    assert tl[2, 4] == 1 and tl[0, 55] == 1 and tl[1, 55] == 1  # seats 2 and 3 have not acted
    assert f["level"][0] == 1 and f["own_level"][0] == 1 and f["phase"].tolist() == [0, 0, 1]
    # unseen by seat 1: 2 copies of each face, minus own hand, minus played 3S 3H
    assert f["unseen"][4] == 1 and f["unseen"][parse_cards("5C")[0]] == 1 and f["unseen"].sum() == 108 - 3 - 2


def test_danzero_encoder_decodes_a_known_position():
    t = _table_with_hands(["3S 3H 4D 2H", "5C 5D 6S", "7S 8S", "9C BJ"], leader=0, obs="danzero")
    t.apply(("pair", 1, parse_cards("3S 2H")))  # a pair of 3 with the wild (R8, R15)
    t.apply(("pair", 3, parse_cards("5C 5D")))
    enc = DanZeroEncoder()
    assert enc.size == 513 and enc.size + enc.action_size == 567
    out = np.zeros(513, np.float32)
    t.observe(2, out)  # seat 2: partner is seat 0
    f = enc.decode(out)
    assert f["hand"].sum() == 2
    assert f["last_move"][parse_cards("5C")[0]] == 1 and f["last_move"].sum() == 2
    assert f["partner_last_move"][4] == 1 and f["partner_last_move"][1] == 1
    n = f["n_cards"].reshape(3, 28)
    assert n[0].argmax() == 2 and n[1].argmax() == 2 and n[2].argmax() == 1  # seats 3, 0, 1
    pl = f["played"].reshape(3, 54)
    assert pl[1, 4] == 1 and pl[1, 1] == 1 and pl[2, parse_cards("5D")[0]] == 1 and pl[0].sum() == 0
    lv = f["levels"].reshape(3, 13)
    assert lv[:, 0].tolist() == [1, 1, 1]
    wi = f["wild_info"].reshape(4, 3)
    # seat 2 holds no wild; seat 3 played none; seat 0 (relative 2) played one 2H; seat 1 none
    assert wi.tolist() == [[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
    feats = np.zeros(54, np.float32)
    enc.action_features(("pair", 5, parse_cards("7S 7S")), 0, feats)
    assert feats[parse_cards("7S")[0]] == 2


def test_field_tables_are_contiguous():
    for enc in (DefaultEncoder(), DanZeroEncoder()):
        rows = enc.field_table()
        pos = 0
        for r in rows:
            assert r["offset"] == pos
            pos += r["size"]
        assert pos == enc.size
    assert DefaultEncoder().size == 774


# --- privacy -----------------------------------------------------------------------------------
def _permute_hidden(table, viewer, rng):
    """A clone whose other seats' unplayed cards are randomly re-dealt among them (counts kept)."""
    new = table.clone()
    d = new.game.deal
    pool = []
    for s in range(4):
        if s != viewer:
            for f in range(54):
                pool += [f] * d.hands[s][f]
    rng.shuffle(pool)
    for s in range(4):
        if s != viewer:
            k = d.n_cards[s]
            h = [0] * 54
            for f in pool[:k]:
                h[f] += 1
            pool = pool[k:]
            d.hands[s] = h
    d._legal = None
    new._refresh()
    return new


@pytest.mark.parametrize("obs", ["default", "danzero"])
def test_observations_never_depend_on_other_seats_hidden_cards(obs):
    t = Table(seed=13, obs=obs, reward="levels")
    rng = np.random.default_rng(3)
    prng = random.Random(5)
    a = np.zeros(t.obs_size, np.float32)
    b = np.zeros(t.obs_size, np.float32)
    checked = changed = 0
    for step in range(600):
        if t.done:
            t.reset()
        if step % 7 == 0:
            for viewer in range(4):
                other = _permute_hidden(t, viewer, prng)
                changed += other.game.deal.hands != t.game.deal.hands
                t.observe(viewer, a)
                other.observe(viewer, b)
                assert np.array_equal(a, b), (obs, viewer, step)
                checked += 1
        mask = np.zeros(t.n_actions, bool)
        t.mask(mask)
        t.apply(int(rng.choice(np.flatnonzero(mask))))
    assert checked > 300 and changed > 100


def test_privileged_labels_only_in_infos():
    e = GuandanAEC(privileged=True)
    e.reset(seed=2)
    hh = e.infos["seat_1"]["hidden_hands"]
    assert hh.shape == (4, 54) and hh.sum() == 108
    assert hh.tolist() == [list(h) for h in e.table.game.deal.hands]
    plain = GuandanAEC()
    plain.reset(seed=2)
    assert "hidden_hands" not in plain.infos["seat_1"]
    assert np.array_equal(plain.observe("seat_1")["observation"], e.observe("seat_1")["observation"])


# --- research hooks ----------------------------------------------------------------------------
def test_clone_is_independent():
    e = GuandanAEC()
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    c = e.clone()
    before = [e.observe(a)["observation"].copy() for a in AGENTS]
    for _ in range(10):
        obs = c.observe(c.agent_selection)
        if c.terminations[c.agent_selection]:
            break
        c.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    after = [e.observe(a)["observation"] for a in AGENTS]
    assert all(np.array_equal(x, y) for x, y in zip(before, after))
    assert e.table.game.deal.history != c.table.game.deal.history


def test_public_state_counts_plays():
    g = Game(seed=1, hands=[list(parse_cards(h)) for h in ["3S 3H 9D", "5C 5D", "7S", "9C"]], first_leader=0)
    p = PublicState()
    p.sync(g)
    g.apply(("pair", 1, parse_cards("3S 3H")))
    p.sync(g)
    assert p.played[0, 4] == 1 and p.played_total.sum() == 2 and p.last_action[0][0] == "pair"


def test_sample_world_is_the_shared_sampler_and_consistent_with_the_public_record():
    """env.sample_world(seat, rng) calls guandan.core.worlds.sample_world: own hand real, counts
    as public (R32), hands + played = the 108-card deck (R1), and the seat's observation and legal
    actions are the same in the sampled world."""
    from guandan.core import worlds

    e = GuandanAEC(reward="levels")
    e.reset(seed=17)
    rng = np.random.default_rng(4)
    prng = random.Random(9)
    checked = 0
    for step in range(400):
        t = e.table
        if t.done:
            e.reset()
            continue
        if step % 25 == 0 and t.game.phase == "play":
            seat = t.to_act
            d = t.game.deal
            from guandan.core.views import seat_view

            state = prng.getstate()
            world = e.sample_world(f"seat_{seat}", prng)
            prng.setstate(state)
            assert world == [list(h) for h in worlds.sample_world(seat_view(t.game, seat), prng)]
            assert sorted(world[seat]) == [f for f in range(54) for _ in range(d.hands[seat][f])]
            assert [len(h) for h in world] == list(d.n_cards)
            total = np.zeros(54, int)
            for h in world:
                np.add.at(total, h, 1)
            assert (total + t.pub.played_total == 2).all()
            w = t.world_table(world)
            a = np.zeros(t.obs_size, np.float32)
            b = np.zeros(t.obs_size, np.float32)
            t.observe(seat, a)
            w.observe(seat, b)
            assert np.array_equal(a, b)
            assert w.legal() == t.legal()
            checked += 1
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked >= 8


def test_natural_straight_flush_count():
    from guandan.core.cards import counts_of

    # A-2-3-4-5 (A low, R10) and 2-6 of spades
    assert abstract.natural_straight_flushes(counts_of(parse_cards("AS 2S 3S 4S 5S 6S")), 9) == 2
    # at level 2 the 2H is the wild (R8): not a natural card of a straight flush
    assert abstract.natural_straight_flushes(counts_of(parse_cards("AH 2H 3H 4H 5H")), 0) == 0
    assert abstract.natural_straight_flushes(counts_of(parse_cards("AH 2H 3H 4H 5H")), 5) == 1
    assert abstract.natural_straight_flushes(counts_of(parse_cards("TD JD QD KD AD 9C")), 0) == 1


def test_masked_action_raises_and_changes_nothing():
    e = GuandanAEC(render_mode="ansi")
    e.reset(seed=6)
    agent = e.agent_selection
    obs = e.observe(agent)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        e.step(bad)
    assert e.agent_selection == agent
    assert np.array_equal(e.observe(agent)["observation"], obs["observation"])
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert agent in e.render()


def test_hidden_card_counts_are_not_encoded_under_le10():
    """R32 / AMB-24 with card_counts=le10: other seats' counts above 10 are hidden; own is shown."""
    from guandan.core.rules import RuleSet

    t = Table(RuleSet.preset("aicomp").replace(card_counts="le10"), seed=2)
    enc = t.encoder
    out = np.zeros(enc.size, np.float32)
    seat = t.to_act
    t.observe(seat, out)
    n = enc.decode(out)["n_cards"].reshape(4, 29)
    assert n[0].argmax() == 27 and n[0].sum() == 1
    assert n[1:].sum() == 0
    plain = Table(seed=2)
    plain.observe(seat, out)
    assert enc.decode(out)["n_cards"].reshape(4, 29)[1:].sum() == 3

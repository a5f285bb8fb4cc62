"""guandan.rl.protocol: the Gymnasium wrapper's opponents as AI-competition protocol clients
through the compat host (issue 9 item 4; PROTOCOL.md).

One test runs our own protocol client (``guandan compat join``) as the ProtocolBot command, so it
runs wherever the package is installed; the other runs a real 2020 competition client (njupt,
``../shared/opponents/seat.py``), skipped with a message when ``.venv-opp`` is missing and failing
under ``CI=true`` (CI creates it).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra (numpy, pettingzoo, gymnasium)")
pytest.importorskip("gymnasium", reason="guandan.rl needs the [rl] extra")

from guandan.rl.gym_env import SingleSeatEnv  # noqa: E402
from guandan.rl.protocol import HostedSeatError, ProtocolBot  # noqa: E402

from test_compat_real_clients import OPP_PYTHON, OPPONENTS, _need_opponents  # noqa: E402


def _play(env: SingleSeatEnv, deals: int, seed: int = 0) -> tuple[int, list[float]]:
    """Random legal learner actions until ``deals`` deals ended; returns (learner steps, rewards)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset()
    steps = 0
    rewards: list[float] = []
    while len(rewards) < deals:
        assert obs["action_mask"].any() and obs["observation"].shape == (774,)
        assert env.table.to_act == env.seat  # the host waits for the learner
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, r, term, trunc, info = env.step(a)
        steps += 1
        if term:
            rewards.append(r)
            obs, info = env.reset()
        else:
            assert r == 0.0
    return steps, rewards


def _check_summary(env: SingleSeatEnv, client_seats: list[int]) -> None:
    s = env.hosted.summary
    for seat in client_seats:
        assert s.decisions[seat] > 0, s.decisions
        assert s.fallback_decisions[seat] == 0, (s.fallback_decisions, s.fallback_reasons)
        assert s.bad_replies[seat] == 0


def test_protocol_bot_opponents_through_the_compat_host():
    """Seats 1 and 3 are our protocol client processes, seat 2 an in-process heuristic client;
    the learner (seat 0) acts through the env. Deal rewards are ±1 for 头游's team (R35)."""
    exe = Path(sys.executable).with_name("guandan")
    assert exe.exists(), f"the guandan command is installed next to the interpreter ({exe})"
    join = f"{shlex.quote(str(exe))} compat join --bot random {{url}}"
    env = SingleSeatEnv(seat=0, opponents=[ProtocolBot(join), "heuristic", ProtocolBot(join)], seed=11,
                        protocol_timeout=20)
    try:
        steps, rewards = _play(env, deals=3)
        assert steps > 0 and set(rewards) <= {1.0, -1.0}
        _check_summary(env, [1, 2, 3])
        game = env.hosted.game
        assert len(game.settlements) >= 3 or game.over  # the host played the deals the env saw
        with pytest.raises(ValueError, match="masked"):
            bad = int(np.flatnonzero(env._obs()["action_mask"] == 0)[0])
            env.step(bad)
    finally:
        env.close()
    assert env.hosted is None


def test_protocol_bot_spec_errors():
    with pytest.raises(ValueError, match="url"):
        ProtocolBot("some-client --no-placeholder")
    with pytest.raises(ValueError, match="opponent"):
        SingleSeatEnv(opponents=[ProtocolBot("x {url}"), 42, "random"])
    env = SingleSeatEnv(opponents=ProtocolBot(f"{shlex.quote(sys.executable)} -c 'raise SystemExit(3)' {{url}}"))
    try:
        with pytest.raises(HostedSeatError, match="exited with status 3"):
            env.reset()
    finally:
        env.close()


def test_real_2020_client_njupt_as_opponent():
    """A real 2020 competition client (njupt, ws4py) on seats 1 and 3 for a few decisions."""
    _need_opponents()  # skipped with a message without .venv-opp; a failure under CI=true
    cmd = f"{shlex.quote(str(OPP_PYTHON))} {shlex.quote(str(OPPONENTS / 'seat.py'))} njupt {{url}} --workdir {{workdir}}"
    env = SingleSeatEnv(seat=0, opponents=[ProtocolBot(cmd), "random", ProtocolBot(cmd)], seed=5, protocol_timeout=20)
    try:
        steps, rewards = _play(env, deals=1)
        assert steps > 0 and rewards[0] in (1.0, -1.0)
        _check_summary(env, [1, 3])
    finally:
        env.close()

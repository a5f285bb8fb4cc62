"""``guandan train``: self-play data and CPU training of the value and policy networks.

Subcommands (each seeded, resumable, with progress bars; PyTorch from the ``[train]`` extra):

* ``guandan train value``: whole games of teacher self-play (default ``heuristic``) recorded
  as full deal states and deal outcomes; trains the value network; writes ``<out>/value.npz``.
* ``guandan train policy``: the same kind of data, recorded as (view, candidate actions,
  teacher's choice); trains the policy network by imitation; writes ``<out>/policy.npz``.
* ``guandan train expert-iteration``: rounds of "generate with the current bot, train both
  networks from the previous round's weights, repeat" (see :mod:`guandan.train.expert`).

Data go to ``--data`` (default ``<out>/data``) as shards; a rerun with the same arguments
skips the shards already there and resumes training from ``<out>/<kind>.ckpt``, so an
interrupted run is continued by running the same command again. ``value`` and ``policy``
given the same ``--data``, ``--teacher`` and ``--seed`` share one data set.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import typer

from .app import PRESET_HELP, RULE_HELP, app, load_rules
from .output import fail as _fail

train_app = typer.Typer(
    name="train",
    help="Train the value and policy networks on the CPU (needs the \\[train] extra: PyTorch).",
    no_args_is_help=True,
)
app.add_typer(train_app, name="train")

_err_console: Any = None


def _err() -> Any:
    global _err_console
    if _err_console is None:
        from rich.console import Console

        _err_console = Console(stderr=True)
    return _err_console




def _parse_hidden(text: str) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        out = tuple(int(x) for x in text.split(","))
    except ValueError:
        _fail(f"--hidden takes comma-separated layer sizes such as 256,128, not {text!r}")
        raise
    if not out or any(h < 1 for h in out):
        _fail(f"--hidden layer sizes must be positive, not {text!r}")
    return out


def _progress() -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TimeRemainingColumn(), console=_err(), transient=False,
    )


def check_manifest(data_dir: Path, manifest: dict[str, Any]) -> None:
    """Write ``data_dir/manifest.json`` or check that the data there were made the same way.

    Raises:
        ValueError: the directory holds data made with other settings.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "manifest.json"
    if path.exists():
        old = json.loads(path.read_text())
        diff = {k: (old.get(k), v) for k, v in manifest.items() if old.get(k) != v}
        if diff:
            raise ValueError(
                f"{data_dir} holds data made with other settings ("
                + ", ".join(f"{k}: {a!r} there, {b!r} now" for k, (a, b) in diff.items())
                + "); use another --data directory"
            )
    else:
        path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


def generate_data(
    data_dir: Path, teacher: Any, teacher_name: str, games: int, seed: int, rules: Any, workers: int,
    games_per_shard: int, value_rate: float, max_candidates: int,
) -> tuple[list[Path], Any]:
    """Generate (or reuse) the shards with a progress bar; returns ``(paths, total statistics)``."""
    from guandan.train.selfplay import generate, shard_stats

    check_manifest(data_dir, {
        "teacher": teacher_name, "seed": seed, "games_per_shard": games_per_shard, "value_rate": value_rate,
        "max_candidates": max_candidates, "rules": rules.to_dict(),
    })
    with _progress() as bar:
        task = bar.add_task(f"self-play ({teacher_name})", total=games)
        paths, _ = generate(
            data_dir, teacher, games, seed, games_per_shard, rules, value_rate, max_candidates,
            progress=lambda d, _t: bar.update(task, completed=d), workers=workers,
        )
    return paths, shard_stats(paths)


def train_with_bar(kind: str, data: dict[str, Any], out: Path, cfg: Any, meta: dict[str, Any], resume: bool) -> Any:
    """Run :func:`~guandan.train.trainer.train_value` or ``train_policy`` under a progress bar."""
    from guandan.train.trainer import train_policy, train_value

    fn = train_value if kind == "value" else train_policy
    with _progress() as bar:
        task = bar.add_task(f"train {kind}", total=None)

        def progress(epoch: int, epochs: int, b: int, nb: int) -> None:
            bar.update(task, total=epochs * nb, completed=epoch * nb + b,
                       description=f"train {kind} (epoch {epoch + 1}/{epochs})")

        return fn(data, out, cfg, meta=meta, resume=resume, progress=progress)


def _report(res: Any, stats: Any, gen_seconds: float) -> None:
    from rich.table import Table

    t = Table(title=f"{res.kind} network: {res.npz}")
    t.add_column("epoch", justify="right")
    for k in res.final:
        if k != "epoch":
            t.add_column(k, justify="right")
    for rec in res.history:
        t.add_row(str(int(rec["epoch"])), *[f"{v:.4f}" for k, v in rec.items() if k != "epoch"])
    from rich.console import Console

    c = Console()
    c.print(t)
    if res.best_epoch:
        c.print(f"exported the weights of epoch {res.best_epoch} (lowest val_loss: early stopping)")
    c.print(
        f"data: {stats.games} games, {stats.deals} deals, {stats.decisions} decisions; "
        f"{res.n_train} training / {res.n_val} validation samples; {res.n_params} parameters; "
        f"self-play {gen_seconds:.0f} s, training {res.seconds:.0f} s "
        f"({(gen_seconds + res.seconds) / 3600:.3f} core-hours)"
    )


def _require_training() -> None:
    """Exit with the install hint unless NumPy and PyTorch (the ``train`` extra) can be imported."""
    try:
        from guandan.agents.nets import require_numpy

        require_numpy()
        from guandan.train.trainer import require_torch

        require_torch()
    except ImportError as e:
        _fail(str(e))


def _run(kind: str, out: Path, data_dir: Path | None, games: int, teacher_name: str, seed: int, epochs: int,
         batch: int, lr: float, hidden: str, workers: int, games_per_shard: int, value_rate: float,
         max_candidates: int, preset: str, rule: list[str] | None, resume: bool, init: Path | None,
         threads: int) -> None:
    _require_training()
    from guandan.train.trainer import TrainConfig
    from guandan.train.selfplay import load_shards, named_agents

    if games < 1 or workers < 1 or games_per_shard < 1:
        _fail("--games, --workers and --games-per-shard must be >= 1")
    if not 0.0 <= value_rate <= 1.0 or max_candidates < 2:
        _fail("--value-rate must be in [0, 1] and --max-candidates >= 2")
    hidden_sizes = _parse_hidden(hidden)
    rules = load_rules(preset, rule)
    try:
        teacher = named_agents(teacher_name)
    except ValueError as e:
        _fail(str(e))
    data_dir = data_dir or out / "data"
    try:
        paths, stats = generate_data(data_dir, teacher, teacher_name, games, seed, rules, workers,
                                     games_per_shard, value_rate, max_candidates)
    except ValueError as e:
        _fail(str(e))
    data = load_shards(paths)
    cfg = TrainConfig(epochs=epochs, batch=batch, lr=lr, seed=seed, hidden=hidden_sizes,
                      threads=threads, init=init)
    meta = {
        "command": "guandan " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "seed": seed, "teacher": teacher_name, "games": stats.games, "deals": stats.deals,
        "decisions": stats.decisions, "value_samples": stats.value_samples,
        "policy_samples": stats.policy_samples, "selfplay_seconds": round(stats.seconds, 1),
    }
    try:
        res = train_with_bar(kind, data, out, cfg, meta, resume)
    except ValueError as e:
        _fail(str(e))
    _report(res, stats, stats.seconds)


_OUT = typer.Option(Path("train-runs/default"), "--out", "-o", help="Directory for checkpoints, metrics and the exported .npz.")
_DATA = typer.Option(None, "--data", help="Directory of the self-play shards (default: OUT/data); shared by value and policy.")
_GAMES = typer.Option(300, "--games", "-g", help="Whole self-play games to generate (about 10 deals and 750 decisions each).")
_TEACHER = typer.Option("heuristic", "--teacher", "-t", help="Agent whose self-play makes the data (see `guandan arena`).")
_SEED = typer.Option(0, "--seed", "-s", help="Master seed: game seeds, sub-sampling, initialisation, batch order.")
_EPOCHS = typer.Option(6, "--epochs", "-e", help="Passes over the training data.")
_BATCH = typer.Option(256, "--batch", help="Samples per batch (decisions for the policy network).")
_LR = typer.Option(1e-3, "--lr", help="Adam learning rate.")
_HIDDEN = typer.Option("", "--hidden", help="Hidden layer sizes, e.g. 256,128 (default: value 256,128; policy 128,64).")
_WORKERS = typer.Option(1, "--workers", "-w", help="Self-play worker processes (the data do not depend on it).")
_GPS = typer.Option(10, "--games-per-shard", help="Games per data file (the unit of resumption and of the validation split).")
_VRATE = typer.Option(0.25, "--value-rate", help="Share of play-phase states recorded for the value network.")
_MAXC = typer.Option(16, "--max-candidates", help="Most candidate actions kept per policy sample.")
_PRESET = typer.Option("official", "--preset", "-p", help=PRESET_HELP)
_RULE = typer.Option(None, "--rule", "-r", help=RULE_HELP)
_RESUME = typer.Option(True, "--resume/--no-resume", help="Continue from OUT/<kind>.ckpt when present.")
_INIT = typer.Option(None, "--init", help="Start from the weights of this .npz (same layer sizes) instead of random ones.")
_THREADS = typer.Option(1, "--threads", help="PyTorch intra-op threads.")


@train_app.command("value")
def train_value_command(
    out: Path = _OUT, data: Path = _DATA, games: int = _GAMES, teacher: str = _TEACHER, seed: int = _SEED,
    epochs: int = _EPOCHS, batch: int = _BATCH, lr: float = _LR, hidden: str = _HIDDEN, workers: int = _WORKERS,
    games_per_shard: int = _GPS, value_rate: float = _VRATE, max_candidates: int = _MAXC, preset: str = _PRESET,
    rule: list[str] = _RULE, resume: bool = _RESUME, init: Path = _INIT, threads: int = _THREADS,
) -> None:
    """Train the value network: P(own team wins the deal) and level score from the full deal state.

    Plays GAMES whole self-play games with TEACHER, records full deal states
    (all four hands) with the deal's outcome, trains, and writes OUT/value.npz
    and OUT/value.metrics.json. Copy the .npz to src/guandan/agents/weights/
    to ship it.
    """
    _run("value", out, data, games, teacher, seed, epochs, batch, lr, hidden, workers, games_per_shard,
         value_rate, max_candidates, preset, rule, resume, init, threads)


@train_app.command("policy")
def train_policy_command(
    out: Path = _OUT, data: Path = _DATA, games: int = _GAMES, teacher: str = _TEACHER, seed: int = _SEED,
    epochs: int = _EPOCHS, batch: int = _BATCH, lr: float = _LR, hidden: str = _HIDDEN, workers: int = _WORKERS,
    games_per_shard: int = _GPS, value_rate: float = _VRATE, max_candidates: int = _MAXC, preset: str = _PRESET,
    rule: list[str] = _RULE, resume: bool = _RESUME, init: Path = _INIT, threads: int = _THREADS,
) -> None:
    """Train the policy network by imitation of TEACHER's choices over the candidate actions.

    Plays GAMES whole self-play games with TEACHER, records each play-phase
    decision (the seat's view, up to MAX_CANDIDATES legal actions, the
    teacher's choice), trains, and writes OUT/policy.npz and
    OUT/policy.metrics.json (val_agree: share of held-out decisions where the
    network picks the teacher's action).
    """
    _run("policy", out, data, games, teacher, seed, epochs, batch, lr, hidden, workers, games_per_shard,
         value_rate, max_candidates, preset, rule, resume, init, threads)


@train_app.command("expert-iteration")
def train_expert_iteration_command(
    out: Path = typer.Option(Path("train-runs/expert-iteration"), "--out", "-o", help="Run directory (round-N/ per round)."),
    rounds: int = typer.Option(2, "--rounds", help="Rounds of generate-then-train."),
    games: int = typer.Option(20, "--games", "-g", help="Self-play games per round."),
    label_rate: float = typer.Option(0.1, "--label-rate", help="Share of play-phase decisions searched by the expert and recorded."),
    worlds: int = typer.Option(4, "--worlds", help="Sampled deals per searched decision (rollout-count mode)."),
    depth: int = typer.Option(12, "--depth", help="Expert rollout actions before the value network scores (0: full rollouts)."),
    window: int = typer.Option(2, "--window", help="Train on the data of the last WINDOW rounds."),
    value: Path = typer.Option(None, "--value", help="Round-0 value network .npz (default: the shipped one)."),
    policy: Path = typer.Option(None, "--policy", help="Round-0 policy network .npz (default: the shipped one)."),
    seed: int = _SEED, epochs: int = typer.Option(3, "--epochs", "-e", help="Epochs per round."),
    batch: int = _BATCH, lr: float = typer.Option(5e-4, "--lr", help="Adam learning rate (fine-tuning)."),
    workers: int = _WORKERS, games_per_shard: int = typer.Option(2, "--games-per-shard", help="Games per data file."),
    preset: str = _PRESET, rule: list[str] = _RULE, threads: int = _THREADS,
) -> None:
    """Expert iteration: rounds of self-play labelled by the expert search, then training.

    Each round plays GAMES games where every seat plays the current policy
    network and, at LABEL_RATE of its play-phase decisions, the expert
    search (search + current networks) instead, recording those choices;
    then trains both networks from the current weights on the last WINDOW
    rounds' data and writes OUT/round-N/{value,policy}.npz, which the next
    round uses. Rerun the same command to resume.
    """
    _require_training()
    from guandan.train.trainer import TrainConfig
    from guandan.train.expert import expert_iteration

    if rounds < 1 or games < 1 or window < 1 or worlds < 1 or depth < 0 or not 0 < label_rate <= 1:
        _fail("--rounds, --games, --window, --worlds must be >= 1, --depth >= 0, --label-rate in (0, 1]")
    for p in (value, policy):
        if p is not None and not p.exists():
            _fail(f"no such file: {p}")
    rules = load_rules(preset, rule)
    cfg = TrainConfig(epochs=epochs, batch=batch, lr=lr, seed=seed, threads=threads)
    meta = {"command": "guandan " + " ".join(shlex.quote(a) for a in sys.argv[1:]), "seed": seed}
    with _progress() as bar:
        play = bar.add_task("self-play", total=games)
        fit = bar.add_task("train", total=None)

        def on_selfplay(r: int, done: int, total: int) -> None:
            bar.update(play, completed=done, total=total, description=f"round {r}/{rounds}: self-play")

        def on_train(kind: str, e: int, ep: int, b: int, nb: int) -> None:
            bar.update(fit, total=ep * nb, completed=e * nb + b, description=f"train {kind} (epoch {e + 1}/{ep})")

        try:
            results = expert_iteration(out, rounds, games, seed, cfg, value, policy, label_rate, worlds, depth,
                                       window, games_per_shard, workers, rules, meta, on_selfplay, on_train)
        except (ValueError, FileNotFoundError) as e:
            _fail(str(e))
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"expert iteration: {out}")
    for col in ("round", "games", "policy samples", "value val_acc", "policy val_agree", "self-play s", "train s"):
        t.add_column(col, justify="right")
    for r in results:
        t.add_row(str(r.round), str(r.games), str(r.policy_samples), f"{r.value_metrics.get('val_acc', float('nan')):.3f}",
                  f"{r.policy_metrics.get('val_agree', float('nan')):.3f}", f"{r.selfplay_seconds:.0f}", f"{r.train_seconds:.0f}")
    Console().print(t)
    Console().print(f"latest networks: {results[-1].value_npz}, {results[-1].policy_npz}")

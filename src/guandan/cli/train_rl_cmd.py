"""``guandan train-rl``: the Deep Monte-Carlo training example (see :mod:`guandan.train.dmc`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from .app import app
from .output import fail as _fail

_HELP = (
    "Train a Deep Monte-Carlo (DouZero-style) Q-network on the guandan.rl environment (PyTorch, CPU) and "
    "evaluate it on duplicate deals against the random agent.\n\n"
    "Every --checkpoint-minutes a checkpoint (weights, optimiser, counters) is written to OUT/dmc.pt; "
    "--resume continues from one. The untrained network is evaluated first, the trained one at the end "
    "(and every --eval-minutes); results go to OUT/eval.jsonl. Needs the [train] extra "
    "(pip install -e '.[train]' in the pyguandan checkout)."
)




@app.command("train-rl", help=_HELP)
def train_rl_command(
    minutes: Annotated[float, typer.Option("--minutes", help="Wall-clock training time in minutes.")] = 60.0,
    out: Annotated[Path, typer.Option("--out", help="Directory for checkpoints and evaluation logs.")] = Path(
        "runs/dmc"
    ),
    tables: Annotated[int, typer.Option("--tables", help="Tables stepped together.")] = 32,
    opponent: Annotated[str, typer.Option("--opponent", help="random (seats 1/3 play uniformly at random) or self.")] = "random",
    eval_deals: Annotated[int, typer.Option("--eval-deals", help="Duplicate deals per evaluation (each played twice).")] = 300,
    eval_minutes: Annotated[float, typer.Option("--eval-minutes", help="Minutes between evaluations (0: only at the end).")] = 0.0,
    checkpoint_minutes: Annotated[float, typer.Option("--checkpoint-minutes", help="Minutes between checkpoints.")] = 5.0,
    resume: Annotated[Path | None, typer.Option("--resume", help="Checkpoint to continue from.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of tables, exploration and initial weights.")] = 0,
    preset: Annotated[str, typer.Option("--preset", help="Rule preset.")] = "aicomp",
    lr: Annotated[float, typer.Option("--lr", help="Adam learning rate.")] = 1e-3,
    epsilon: Annotated[float, typer.Option("--epsilon", help="Exploration probability.")] = 0.1,
    threads: Annotated[int, typer.Option("--threads", help="PyTorch threads of the learner process.")] = 1,
    actors: Annotated[int, typer.Option(
        "--actors", help="Extra actor processes stepping their own tables with the shared weights (0: one process; "
                         "1 puts the second core to work).")] = 1,
    lr_end: Annotated[float | None, typer.Option(
        "--lr-end", help="Learning rate reached linearly after --decay-minutes (default 1e-4; equal to --lr for a "
                         "constant rate).")] = 1e-4,
    epsilon_end: Annotated[float | None, typer.Option(
        "--epsilon-end", help="Exploration probability reached linearly after --decay-minutes.")] = 0.02,
    decay_minutes: Annotated[float | None, typer.Option(
        "--decay-minutes", help="Training minutes over which the learning rate and exploration fall to their end "
                                "values (default: --minutes).")] = None,
    teacher: Annotated[str, typer.Option(
        "--teacher", help="none, or a bot (heuristic) that makes a falling share of the learners' early decisions "
                          "(exploration guide; samples are still labelled with the deal's return).")] = "heuristic",
    teacher_start: Annotated[float, typer.Option("--teacher-start", help="Initial share of teacher decisions, 0..1.")] = 0.5,
    teacher_minutes: Annotated[float, typer.Option(
        "--teacher-minutes", help="Training minutes over which the teacher's share falls to 0.")] = 40.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final summary as JSON.")] = False,
) -> None:
    """Train, checkpoint and evaluate; exits 2 with a one-line message on bad options or a missing
    [train] extra."""
    if not minutes > 0:
        _fail(f"--minutes must be > 0, not {minutes}")
    if tables < 1 or eval_deals < 1 or threads < 1:
        _fail("--tables, --eval-deals and --threads must be at least 1")
    if actors < 0:
        _fail(f"--actors must be >= 0, not {actors}")
    if checkpoint_minutes <= 0 or eval_minutes < 0:
        _fail("--checkpoint-minutes must be > 0 and --eval-minutes >= 0")
    try:
        from guandan.train.dmc import DMCConfig, DMCTrainer, evaluate
    except ImportError as e:
        _fail(f"train-rl needs the [train] extra (pip install -e '.[train]' in the pyguandan checkout): {e}")
    from guandan.core.errors import RuleConfigError

    try:
        cfg = DMCConfig(tables=tables, opponent=opponent, seed=seed, preset=preset, lr=lr, epsilon=epsilon,
                        threads=threads, teacher=None if teacher == "none" else teacher,
                        teacher_start=teacher_start, teacher_minutes=teacher_minutes, actors=actors,
                        lr_end=lr_end, epsilon_end=epsilon_end,
                        decay_minutes=minutes if decay_minutes is None else decay_minutes)
        trainer = DMCTrainer(cfg)
    except (ValueError, RuleConfigError) as e:
        _fail(str(e))
    if resume is not None:
        if not resume.is_file():
            _fail(f"no checkpoint at {resume}")
        try:
            trainer.load(resume)
        except ValueError as e:
            _fail(str(e))
        if decay_minutes is None:  # decay over the whole training, the resumed part included
            trainer.cfg.decay_minutes = trainer.taught_s / 60.0 + minutes
    from guandan.runtime.gctune import tune_gc

    tune_gc()  # this process steps tables and trains: frozen set-up, rarer young collections
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "dmc.pt"
    log = out / "eval.jsonl"

    import numpy as np
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    console = Console(stderr=as_json)

    def run_eval(label: str) -> dict:
        with Progress(TextColumn(f"evaluating ({label})"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      console=console, transient=True) as p:
            task = p.add_task("eval", total=eval_deals)
            res = evaluate(trainer.model, eval_deals, preset=preset, progress=lambda k: p.update(task, completed=k))
        res.update(label=label, updates=trainer.updates, deals_trained=trainer.deals, decisions=trainer.decisions,
                   loadavg=[round(x, 2) for x in os.getloadavg()])
        with log.open("a") as f:
            f.write(json.dumps(res) + "\n")
        lo, hi = res["ci95"]
        console.print(f"[bold]{label}[/bold]: won {res['won']}/{res['games_played']} duplicate deals vs random "
                      f"({res['win_rate']:.1%}, 95% CI {lo:.1%}-{hi:.1%}); both seatings won "
                      f"{res['both_won']}/{res['deals']}")
        return res

    before = run_eval("before training")
    total_s = minutes * 60.0
    # checkpoints, evaluations and the progress bar follow training time (tr.run_s), which
    # excludes the evaluations themselves
    next_ckpt = checkpoint_minutes * 60.0
    next_eval = eval_minutes * 60.0 if eval_minutes > 0 else float("inf")
    with Progress(
        TextColumn("training"), BarColumn(), TimeElapsedColumn(), TextColumn("/"), TimeRemainingColumn(),
        TextColumn("{task.fields[stats]}"), console=console,
    ) as prog:
        task = prog.add_task("train", total=total_s, stats="")
        d0, t0 = trainer.decisions, 0.0

        def tick(tr: DMCTrainer) -> None:
            nonlocal d0, t0, next_ckpt, next_eval
            now = tr.run_s
            rate = (tr.decisions - d0) / max(now - t0, 1e-9)
            d0, t0 = tr.decisions, now
            loss = float(np.mean(tr.losses[-100:])) if tr.losses else float("nan")
            prog.update(task, completed=min(now, total_s),
                        stats=f"deals {tr.deals:,}  updates {tr.updates:,}  loss {loss:.3f}  {rate:,.0f} decisions/s"
                              f"  teacher {tr.teacher_p:.0%}  ε {tr.epsilon:.3f}")
            if now >= next_ckpt:
                tr.save(ckpt)
                next_ckpt = now + checkpoint_minutes * 60.0
            if now >= next_eval:
                run_eval(f"after {now / 60:.1f} min")
                next_eval = now + eval_minutes * 60.0

        try:
            trainer.train(total_s, tick, tick_s=1.0)
        finally:
            trainer.close()
        prog.update(task, completed=total_s)
    trainer.save(ckpt)
    after = run_eval(f"after {minutes:g} min")
    summary = {"before": before, "after": after, "checkpoint": str(ckpt), "minutes": minutes,
               "deals_trained": trainer.deals, "decisions": trainer.decisions, "updates": trainer.updates}
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        console.print(f"checkpoint: {ckpt}; evaluation log: {log}")

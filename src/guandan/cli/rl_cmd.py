"""``guandan rl selfplay`` and ``guandan rl arena``: batches of tables in worker processes or Ray
actors (see :mod:`guandan.rl.scale`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .output import fail as _fail

rl_app = typer.Typer(help="Research environment: self-play data and arena evaluation (needs the [rl] extra; "
                          "--ray/--ray-address spread the work over Ray actors).", no_args_is_help=True)
app.add_typer(rl_app, name="rl")

_RAY = "Run the workers as Ray actors on a local Ray instance (needs `pip install ray`)."
_RAY_ADDR = "Connect to an existing Ray cluster at this address (implies --ray)."




def _scale() -> Any:
    try:
        from guandan.rl import scale
        from guandan.runtime.gctune import tune_gc
    except ImportError as e:
        _fail(f"this command needs the [rl] extra (pip install -e '.[rl]' in the pyguandan checkout): {e}")
    tune_gc()  # this command's process steps tables: frozen set-up, rarer young collections
    return scale


def _check_ray(use_ray: bool, address: str | None, scale: Any) -> None:
    if (use_ray or address) and not scale.ray_available():
        _fail("--ray needs Ray: pip install ray (or run without --ray: the same work runs in this process)")


def _policy(spec: str) -> Any:
    if spec in ("random", "heuristic"):
        return spec
    path = Path(spec)
    if not path.is_file():
        _fail(f"a policy is random, heuristic or a checkpoint file from `guandan train-rl`; {spec!r} is none")
    try:
        from guandan.train.dmc import TorchPolicy
    except ImportError as e:
        _fail(f"a checkpoint policy needs the [train] extra (PyTorch): {e}")
    return TorchPolicy(path)


@rl_app.command("selfplay", help="Generate labelled self-play decisions (Deep Monte-Carlo targets) into an .npz file.")
def selfplay_command(
    out: Annotated[Path, typer.Option("--out", help="Output .npz (obs, action, ret, seat).")] = Path("selfplay.npz"),
    steps: Annotated[int, typer.Option("--steps", help="Decisions per table.")] = 500,
    workers: Annotated[int, typer.Option("--workers", help="Workers (Ray actors with --ray).")] = 2,
    tables: Annotated[int, typer.Option("--tables", help="Tables per worker.")] = 16,
    policy: Annotated[str, typer.Option("--policy", help="random, heuristic or a train-rl checkpoint.")] = "random",
    seed: Annotated[int, typer.Option("--seed")] = 0,
    preset: Annotated[str, typer.Option("--preset")] = "aicomp",
    use_ray: Annotated[bool, typer.Option("--ray", help=_RAY)] = False,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help=_RAY_ADDR)] = None,
) -> None:
    """Write the samples and print a one-line summary."""
    scale = _scale()
    _check_ray(use_ray, ray_address, scale)
    if min(steps, workers, tables) < 1:
        _fail("--steps, --workers and --tables must be at least 1")
    import time

    import numpy as np
    from rich.console import Console

    console = Console()
    t0 = time.perf_counter()
    with console.status(f"self-play: {workers} workers x {tables} tables x {steps} steps"
                        + (" on Ray" if use_ray or ray_address else "")):
        data = scale.generate_selfplay(steps, workers, tables, _policy(policy), seed, preset, use_ray, ray_address)
    dt = time.perf_counter() - t0
    np.savez_compressed(out, obs=data["obs"], action=data["action"], ret=data["ret"], seat=data["seat"])
    console.print(f"{data['deals']} deals, {len(data['action']):,} labelled decisions "
                  f"({data['decisions']:,} steps, {data['decisions'] / dt:,.0f} decisions/s) -> {out}")


@rl_app.command("arena", help="Duplicate deals: policy A against policy B (each deal played twice, seats swapped).")
def arena_command(
    policy: Annotated[str, typer.Option("--policy", help="Policy A: random, heuristic or a train-rl checkpoint.")],
    opponent: Annotated[str, typer.Option("--opponent", help="Policy B.")] = "random",
    deals: Annotated[int, typer.Option("--deals", help="Distinct deals.")] = 100,
    workers: Annotated[int, typer.Option("--workers")] = 2,
    tables: Annotated[int, typer.Option("--tables", help="Tables stepped together per worker.")] = 16,
    seed: Annotated[int, typer.Option("--seed", help="First deal seed.")] = 10_000,
    preset: Annotated[str, typer.Option("--preset")] = "aicomp",
    use_ray: Annotated[bool, typer.Option("--ray", help=_RAY)] = False,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help=_RAY_ADDR)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Print policy A's duplicate-deal record."""
    scale = _scale()
    _check_ray(use_ray, ray_address, scale)
    if min(deals, workers, tables) < 1:
        _fail("--deals, --workers and --tables must be at least 1")
    from rich.console import Console

    console = Console()
    with console.status(f"arena: {deals} duplicate deals" + (" on Ray" if use_ray or ray_address else "")):
        res = scale.arena(deals, _policy(policy), _policy(opponent), workers, tables, seed, preset, use_ray,
                          ray_address)
    if as_json:
        typer.echo(json.dumps(res))
        return
    console.print(f"{policy} vs {opponent}: won {res['won']}/{res['games_played']} ({res['win_rate']:.1%}); "
                  f"both seatings won {res['both_won']}/{res['deals']}, both lost {res['both_lost']}")

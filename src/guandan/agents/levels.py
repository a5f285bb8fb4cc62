"""Difficulty levels and agent specs: parsing ``name:key=value`` and the levels' settings (DESIGN.md
section 6); :mod:`guandan.agents.registry` builds the agents from them.

Levels (issue: difficulty levels everywhere a bot can sit):

=========  ===========================================================================
``easy``   a casual player: the heuristic with believable mistakes (:mod:`.easy`)
``normal`` the heuristic (:mod:`.heuristic`)
``hard``   determinized search over sampled deals, 1 s per decision (:mod:`.search`)
``expert`` the search with the learned networks (:mod:`.expert`; NumPy)
=========  ===========================================================================

The plain names ``random``, ``heuristic`` and ``search`` (= ``hard``) are agents too. A spec
may carry options after a colon, ``name:key=value,key=value``:

* ``search``/``hard``: ``budget`` (seconds per decision), ``worlds`` (rollout-count mode),
  ``workers`` (processes), ``candidates`` (most candidate actions), ``late`` (search only
  positions where a seat still playing holds at most this many cards; ``all``: every position),
  ``late_candidates``, ``z`` (standard errors a switch from the heuristic's move needs),
  ``belief`` (weight factor per recent decision of the other seats that a sampled world
  explains; 1: uniform worlds), ``belief_depth`` (decisions per seat asked), ``slack`` (belief
  roulette: worlds explaining more than this many fewer decisions than the best early world are
  rolled out only with the probability of their weight), ``rollout`` (late-position rollout
  policy: ``fast``, the default of ``hard``, or ``heuristic``), ``belief_model`` (model of the
  other players for the belief weighting: ``fast``, the default of ``hard``, or ``heuristic``),
  ``chain`` (belief chain: Metropolis card swaps per sampled world; 0, the default: importance
  weights), ``solver`` (exact endgame solver per sampled world: node budget; 0, the default:
  off), ``solver_cards`` (most cards left in all for the solver to be tried; default 40) and
  ``sampler`` (world sampler: ``greedy``, the default; ``exact``, exactly uniform; ``table`` or
  ``net``, tilted by the learned belief, :mod:`guandan.agents.belief`);
* ``expert``: the ``search`` options plus ``depth`` (rollout actions before the value
  network scores the position; 0, the default, for full rollouts) and ``rollout`` (``fast``, the default:
  ``hard``'s fast rollout policy and fast belief model; ``heuristic``; or ``policy``);
* ``easy``: ``mistakes`` (probability of a mistake, 0..1).

Example: ``hard:budget=0.25,workers=1``.
"""

from __future__ import annotations

from typing import Any

#: Difficulty names, weakest first.
LEVEL_NAMES: tuple[str, ...] = ("easy", "normal", "hard", "expert")

def late_option(value: str) -> int | None:
    """The ``late`` option: a card count (search positions where a seat still playing holds at
    most that many cards), or ``all`` (search every position).

    Raises:
        ValueError: neither ``all`` nor a non-negative int.
    """
    if value.strip().lower() == "all":
        return None
    n = int(value)
    if n < 0:
        raise ValueError(value)
    return n


late_option.__name__ = "card count or 'all'"

def _policy(value: str, **fast: Any) -> Any:
    """``fast`` -> ``FastRolloutPolicy(**fast)``, ``heuristic`` -> ``HeuristicAgent()``.

    Raises:
        ValueError: another name.
    """
    name = value.strip().lower()
    if name == "fast":
        from .fast_rollout import FastRolloutPolicy

        return FastRolloutPolicy(**fast)
    if name == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent()
    raise ValueError(value)


def rollout_option(value: str) -> Any:
    """The ``rollout`` option of ``search``/``hard``: the policy of late-position rollouts,
    ``fast`` (:class:`guandan.agents.fast_rollout.FastRolloutPolicy`, the heuristic's rules read
    straight from the deal) or ``heuristic`` (the full heuristic).

    Raises:
        ValueError: another name.
    """
    return _policy(value)


rollout_option.__name__ = "'fast' or 'heuristic'"


def belief_model_option(value: str) -> Any:
    """The ``belief_model`` option of ``search``/``hard``: the model of the other players whose
    decisions weight the sampled worlds, ``heuristic`` or ``fast`` (the heuristic's rules read
    from the deal, with the heuristic's decomposition budget and answer judging, no incremental
    decomposition: it agrees with the heuristic at about 99% of decisions, measured on
    heuristic self-play, and makes the belief chain cheap).

    Raises:
        ValueError: another name.
    """
    return _policy(value, dec_budget=400, max_eval=6, incremental=False)


belief_model_option.__name__ = "'fast' or 'heuristic'"

_SEARCH_OPTIONS: dict[str, tuple[str, Any]] = {
    "budget": ("budget_s", float),
    "worlds": ("worlds", int),
    "workers": ("workers", int),
    "candidates": ("max_candidates", int),
    "late": ("late_cards", late_option),
    "late_candidates": ("late_candidates", int),
    "z": ("switch_z", float),
    "belief": ("belief_weight", int),
    "belief_depth": ("belief_depth", int),
    "slack": ("belief_slack", int),
    "rollout": ("late_rollout_policy", rollout_option),
    "belief_model": ("belief_model", belief_model_option),
    "chain": ("belief_moves", int),
    "sampler": ("world_sampler", str),
    "solver": ("solver_nodes", int),
    "solver_cards": ("solver_cards", int),
}

_OPTIONS: dict[str, dict[str, tuple[str, Any]]] = {
    "search": dict(_SEARCH_OPTIONS),
    "easy": {"mistakes": ("mistake_rate", float)},
    "expert": {
        **_SEARCH_OPTIONS,
        "depth": ("rollout_depth", int),
        "rollout": ("rollout", str),
    },
}
_ALIASES = {"hard": "search", "normal": "heuristic"}

#: The ``hard`` level's search settings (:class:`guandan.agents.search.SearchAgent` arguments),
#: chosen by the deviation audit and arena figures in docs/bot-strength.md: search the late
#: positions only (someone holds 10 cards or fewer), weight sampled worlds by the other seats'
#: last 4 decisions (factor 4 per decision the heuristic would have made with that world's
#: hands), and switch from the heuristic's move at 2.5 standard errors of the paired gain (up to
#: 7 other candidates are compared at once: a looser test switches on noise). ``registry.make_level_agent``
#: adds the fast rollout policy and the fast model of the other players (``rollout=fast``,
#: ``belief_model=fast``) unless the spec names others.
HARD_DEFAULTS: dict[str, Any] = {"late_cards": 10, "belief_weight": 4, "belief_depth": 4, "switch_z": 2.5}


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``name:key=value,...`` into the agent name and constructor keyword arguments.

    Returns:
        ``(base name, kwargs)`` with the level aliases resolved (``hard`` → ``search``,
        ``normal`` → ``heuristic``).
    Raises:
        ValueError: an unknown option or a value of the wrong type, naming the valid options.
    """
    name, _, opts = spec.partition(":")
    name = name.strip()
    base = _ALIASES.get(name, name)
    kwargs: dict[str, Any] = {}
    if not opts.strip():
        return base, kwargs
    allowed = _OPTIONS.get(base, {})
    for item in opts.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in allowed:
            valid = ", ".join(allowed) or "none"
            raise ValueError(f"bad option {item.strip()!r} for agent {name!r}; valid options: {valid}")
        arg, typ = allowed[key]
        try:
            kwargs[arg] = typ(value.strip())
        except ValueError:
            raise ValueError(
                f"option {key} of agent {name!r} needs a {typ.__name__}, not {value.strip()!r}"
            ) from None
    return base, kwargs


def fast_policies(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` (:class:`~guandan.agents.search.SearchAgent` arguments, changed in place and
    returned) with the fast rollout policy and the fast model of the other players unless they
    name others (``rollout=fast``, ``belief_model=fast``): the same decisions as the heuristic's
    at ~98-99% of decisions for about 1.5x the sampled worlds per second (README "Bot
    strength"). Used by ``hard`` and ``expert``."""
    from .fast_rollout import FastRolloutPolicy

    if kwargs.get("late_rollout_policy") is None:
        kwargs["late_rollout_policy"] = FastRolloutPolicy()
    kwargs.setdefault("belief_model", belief_model_option("fast"))
    return kwargs

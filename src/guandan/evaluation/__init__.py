"""Evaluation tools: how strong, how fast and how correct the engine and the bots are.

* :mod:`.arena`: duplicate matches between two agents, with confidence intervals (``guandan arena``).
* :mod:`.bench`: move-generation and self-play speed (``guandan bench``).
* :mod:`.search_bench`: speed of the search path (``guandan bench-search``).
* :mod:`.search_audit`: where the search deviates from the heuristic (``guandan bench-search --audit``).
* :mod:`.conformance`: the rules-case runner (``python -m guandan.conformance FILE``).

May import the core and the agents; the rules-case runner imports the core alone.
"""

"""Training code (optional extra ``pyguandan[train]``: PyTorch on the CPU). The only package that
imports PyTorch (DESIGN.md section 6); nothing at play time imports it, and it never imports the server.

Modules:

* :mod:`guandan.train.selfplay` — plays whole games with a teacher bot and records value
  samples (full deal states and the deal's outcome) and policy samples (a seat's view, its
  candidate actions and the teacher's choice); NumPy only.
* :mod:`guandan.train.trainer` — PyTorch models mirroring :class:`guandan.agents.nets.MLP`,
  seeded training with resumable checkpoints, export to the NumPy ``.npz`` format that
  :mod:`guandan.agents.nets` reads, and the expert-iteration loop (``guandan train``).
* :mod:`guandan.train.belief` — self-play belief data (each hidden seat's count of each rank
  group at sampled decisions) and the counted prior fitted on it; NumPy only.
* :mod:`guandan.train.belief_net` — the belief network (PyTorch), exported to the NumPy format
  of :mod:`guandan.agents.belief_net`.
* :mod:`guandan.train.dmc` — a compact Deep Monte-Carlo trainer on the research environment
  :mod:`guandan.rl` (``guandan train-rl``).

``pip install torch==2.13.0`` takes the CPU build.
"""

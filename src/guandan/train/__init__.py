"""Training of the learned evaluation (``guandan train``): self-play data, PyTorch training on
the CPU, export to the NumPy ``.npz`` format that :mod:`guandan.agents.nets` reads.

Modules:

* :mod:`guandan.train.selfplay` — plays whole games with a teacher bot and records value
  samples (full deal states and the deal's outcome) and policy samples (a seat's view, its
  candidate actions and the teacher's choice); NumPy only.
* :mod:`guandan.train.trainer` — PyTorch models mirroring :class:`guandan.agents.nets.MLP`,
  seeded training with resumable checkpoints, export, and the expert-iteration loop.

PyTorch is the optional extra ``[train]`` (``pip install torch==2.13.0`` takes the CPU build);
nothing at play time imports it.
"""

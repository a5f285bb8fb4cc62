"""Training code (optional extra ``pyguandan[train]``: PyTorch on CPU). The only package that
imports PyTorch (DESIGN.md section 6); it consumes :mod:`guandan.rl` and never the server."""

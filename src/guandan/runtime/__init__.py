"""Settings of the Python process shared by the long-running commands (the server, the RL stepping
processes, training actors): :mod:`.gctune`, the garbage collector's thresholds. Standard library only.
"""

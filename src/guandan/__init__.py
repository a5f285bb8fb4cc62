"""pyguandan: the open Guandan (掼蛋) rules engine, players, server and research environment."""

__version__ = "0.1.0"

"""Compatibility with the Guandan AI-competition websocket protocol (``docs/protocol.md``).

* :mod:`guandan.compat.notation` converts cards and actions between the platform's notation
  (suit then rank, ``SB``/``HR`` jokers, ``[type, rank, cards]`` with the sequence rank = lowest
  card) and pyguandan's, explicitly and round-trip tested;
* :mod:`guandan.compat.host` serves games to four protocol clients (``guandan compat serve``);
* :mod:`guandan.compat.client` lets pyguandan bots play on any protocol host (``guandan compat join``).
"""

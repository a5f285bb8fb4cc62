"""The terminal game (``guandan play``): one person against bots in a terminal.

* :mod:`.game`: starting a game (language, bots, opening lines); what the command line calls.
* :mod:`.session`: the game loop, :class:`~guandan.terminal.session.PlaySession` (asks the game what
  is pending, a bot or the person, and applies the answer; reports every event).
* :mod:`.render`: drawing the table, hands and plays as Rich renderables (pure functions).
* :mod:`.commands`: reading one typed line (cards, ranks only, pass, hint, help, quit).
* :mod:`.i18n`: the languages (``--lang en|zh``); every text goes through ``tr``.

May import the core, the agents and Rich; never the server or the command line.
"""

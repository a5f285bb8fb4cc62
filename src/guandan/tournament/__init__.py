"""Competitions: pairing, scoring and the director's rules for Guandan tournaments (issue 21).

Plain code over plain data (DESIGN.md section 6): no I/O, no clock, no web code. The web server, the
``guandan tournament`` CLI and bots-only events all drive the same functions.

* :mod:`.model`: the dataclasses (tournament, entries, rounds, matches, results, log) and versioned JSON;
* :mod:`.swiss`: Swiss / points-paired rounds by maximum-weight matching;
* :mod:`.brackets`: Berger round robin, groups, knock-out brackets;
* :mod:`.scoring`: R58 field points and tie-breaks, R54 penalties, standings, prize list;
* :mod:`.teams`: team matches (复式) on the 26-point scale;
* :mod:`.director`: pairing, result entry, disputes, corrections, withdrawals, with their errors;
* :mod:`.simulate`: a seeded simulation of a whole event with random results;
* :mod:`.errors`: one error class per case, each with a stable ``code``.
"""

from __future__ import annotations

from .director import (add_entry, add_penalty, claim_result, correct_result, enter_result, pair_next_round,
                       repair_round, withdraw)
from .errors import TournamentError
from .model import Entry, Match, MatchResult, Options, Penalty, Player, Round, Tournament, from_json, to_json
from .scoring import Standing, prize_list, score_match, standings

__all__ = ["Tournament", "Entry", "Player", "Round", "Match", "MatchResult", "Penalty", "Options", "Standing",
           "TournamentError", "add_entry", "withdraw", "pair_next_round", "repair_round", "claim_result",
           "enter_result", "correct_result", "add_penalty", "standings", "prize_list", "score_match",
           "to_json", "from_json"]

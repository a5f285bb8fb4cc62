"""Review of a deal (复盘, issue 22): for each decision of one seat, the move played against the
best alternative, estimated on worlds consistent with what that seat could see (never the real
hidden hands) and, apart, on the real hands. Computed in worker processes, cacheable per record;
``guandan review RECORD.jsonl`` in the terminal."""

from .evaluate import Budget, Estimate, ViewAssessment, assess_real, assess_view, review_candidates, same_play
from .positions import DealDecisions, Decision, deal_decisions, load_lines
from .run import MARK_Z, REVIEW_VERSION, ReviewCache, ReviewCacheError, action_text, review_key, review_lines

__all__ = [
    "Budget", "Estimate", "ViewAssessment", "assess_real", "assess_view", "review_candidates", "same_play",
    "DealDecisions", "Decision", "deal_decisions", "load_lines",
    "MARK_Z", "REVIEW_VERSION", "ReviewCache", "ReviewCacheError", "action_text", "review_key", "review_lines",
]

"""Reports and moderation (issue 25 item 8): the rules, as plain functions with no I/O.

The storage (:mod:`guandan.server.moderation_store`) and the HTTP API
(:mod:`guandan.server.api_moderation`) call these; the command line (``guandan admin``) too.

* **Reports.** A player reports another with a reason from :data:`REPORT_REASONS`, a room and/or
  finished game they both sat in, and optionally the deal number (1..:data:`DEAL_MAX`). Nobody reports
  themself; one report per reporter, target and table stays open at a time; a reporter files at most
  :data:`REPORTS_PER_DAY` reports in 24 hours.
* **The admin role** is given and taken from the command line only (``guandan admin grant NAME`` /
  ``revoke NAME``); the web API never changes it.
* **Admin actions** (:data:`ACTIONS`): mute an account's quick phrases or suspend it for
  :data:`HOURS_MIN`..:data:`HOURS_MAX` hours, lift either, or dismiss a report. Each needs a reason
  (``why``, 1..:data:`WHY_MAX` characters) and is logged. Acting on a report closes it.
* **Suspended** (``suspended_until`` in the future): the account cannot log in (403
  ``account_suspended`` with ``until``), its sessions end, it cannot play until then.
* **Muted** (``phrases_muted_until`` in the future): its phrases are refused (``phrases_muted`` with ``until``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = ["ACTIONS", "DEAL_MAX", "HOURS_MAX", "HOURS_MIN", "ModerationError", "REPORTS_PER_DAY",
           "REPORT_REASONS", "WHY_MAX", "action_until", "active_until", "check_action", "check_report",
           "report_link"]

#: Reasons a player may give (the UI's words: ``static/js/i18n_moderation.js``).
REPORT_REASONS: tuple[str, ...] = ("abusive_phrases", "signalling", "stalling", "abandoning", "cheating", "name")
#: Admin actions: the two sanctions (with hours), their lifting, and closing a report with no sanction.
ACTIONS: tuple[str, ...] = ("mute_phrases", "suspend", "unmute_phrases", "unsuspend", "dismiss")
#: Actions that need ``hours``.
TIMED_ACTIONS = frozenset({"mute_phrases", "suspend"})
HOURS_MIN = 1
HOURS_MAX = 24 * 365
WHY_MAX = 500
DEAL_MAX = 1000
REPORTS_PER_DAY = 20


@dataclass
class ModerationError(Exception):
    """A refused report or action: HTTP ``status``, one-line ``message``, machine ``code`` and ``params``."""

    status: int
    message: str
    code: str
    params: dict[str, Any]

    def __str__(self) -> str:
        return self.message


def check_report(*, reporter_id: int, target_id: int, reason: object, deal_no: object, shared_table: bool,
                 open_same: bool, reports_last_day: int) -> None:
    """Whether a report may be filed (module docstring).

    Args:
        reporter_id, target_id: account ids. reason: the reason given. deal_no: ``None`` or 1..DEAL_MAX.
        shared_table: both sat at the room or game given. open_same: the reporter already has an open
            report of the target for that table. reports_last_day: the reporter's reports of the last 24 h.
    Raises:
        ModerationError: 400 ``report_self`` / ``bad_reason`` (``valid``) / ``bad_deal`` (``max``),
            403 ``not_table_mate``, 409 ``already_reported``, 429 ``too_many_reports`` (``max``).
    """
    if reporter_id == target_id:
        raise ModerationError(400, "you cannot report yourself", "report_self", {})
    if not isinstance(reason, str) or reason not in REPORT_REASONS:
        raise ModerationError(400, f"the reason must be one of: {', '.join(REPORT_REASONS)}", "bad_reason",
                              {"valid": list(REPORT_REASONS)})
    if deal_no is not None and (isinstance(deal_no, bool) or not isinstance(deal_no, int) or not 1 <= deal_no <= DEAL_MAX):
        raise ModerationError(400, f"the deal number must be 1 to {DEAL_MAX}", "bad_deal", {"max": DEAL_MAX})
    if not shared_table:
        raise ModerationError(403, "you can only report a player you sat at a table with", "not_table_mate", {})
    if open_same:
        raise ModerationError(409, "you have already reported this player for this table", "already_reported", {})
    if reports_last_day >= REPORTS_PER_DAY:
        raise ModerationError(429, f"at most {REPORTS_PER_DAY} reports a day", "too_many_reports",
                              {"max": REPORTS_PER_DAY})


def check_action(action: object, hours: object, why: object) -> tuple[str, int | None, str]:
    """Validate an admin action.

    Args:
        action: one of :data:`ACTIONS`. hours: whole hours for ``mute_phrases`` / ``suspend``, else ignored.
        why: the admin's reason (stripped; 1..WHY_MAX characters).
    Returns:
        ``(action, hours or None, why)``.
    Raises:
        ModerationError(400): ``bad_action`` (``valid``), ``bad_hours`` (``min``, ``max``), ``why_required`` (``max``).
    """
    if not isinstance(action, str) or action not in ACTIONS:
        raise ModerationError(400, f"the action must be one of: {', '.join(ACTIONS)}", "bad_action",
                              {"valid": list(ACTIONS)})
    timed: int | None = None
    if action in TIMED_ACTIONS:
        if isinstance(hours, bool) or not isinstance(hours, int) or not HOURS_MIN <= hours <= HOURS_MAX:
            raise ModerationError(400, f"hours must be a whole number from {HOURS_MIN} to {HOURS_MAX}", "bad_hours",
                                  {"min": HOURS_MIN, "max": HOURS_MAX})
        timed = hours
    text = " ".join(why.split()) if isinstance(why, str) else ""
    if not text or len(text) > WHY_MAX:
        raise ModerationError(400, f"say why (1 to {WHY_MAX} characters); it is logged", "why_required",
                              {"max": WHY_MAX})
    return action, timed, text


def action_until(action: str, hours: int | None, now: datetime) -> datetime | None:
    """The new end of the mute or suspension an action sets: ``now + hours`` for ``mute_phrases`` and
    ``suspend``, ``now`` for the lifting actions (ends it at once), ``None`` for ``dismiss``.

    A new sanction replaces the old one (a shorter suspension shortens it): the admin's last word holds."""
    if action in TIMED_ACTIONS:
        assert hours is not None
        return now + timedelta(hours=hours)
    if action in ("unmute_phrases", "unsuspend"):
        return now
    return None


def active_until(until: datetime | None, now: datetime) -> datetime | None:
    """``until`` when that end is still ahead of ``now`` (the sanction holds), else ``None``."""
    return until if until is not None and until > now else None


def report_link(room_id: str | None, game_id: int | None) -> str | None:
    """Where an admin looks at a reported table: the finished game's replay ``/replay/{game_id}``, else
    the room ``/room/{room_id}`` (a game in progress), else ``None``."""
    if game_id is not None:
        return f"/replay/{game_id}"
    if room_id:
        return f"/room/{room_id}"
    return None

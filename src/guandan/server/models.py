"""Database tables of the web server (SQLAlchemy 2 typed declarative mapping).

The tables are exactly those of the server contract: ``users``, ``sessions``, ``rooms``,
``room_seats``, ``games``, ``game_players`` and ``game_events`` (the live games, one row per record
line: issue 10, :mod:`guandan.server.gamestore`), ``reviews`` (the computed reviews of deals
of finished games: issue 22, :mod:`guandan.server.reviews`), the tournaments run on the site:
``tournaments``, ``tournament_directors`` and ``tournament_audit`` (:mod:`guandan.server.tournament_store`),
the daily duplicate challenge: ``challenges`` and ``challenge_plays`` (:mod:`guandan.server.challenge_store`),
and friends: ``friend_links`` and ``friend_invites`` (:mod:`guandan.server.friends_store`).
The schema itself is created by the Alembic
migrations in :mod:`guandan.server.migrations` (see :func:`guandan.server.db.migrate`), never by
``metadata.create_all``; a test checks that the two agree.

Every time stamp is stored and returned as an aware UTC :class:`~datetime.datetime`
(:class:`UTCDateTime`), also on SQLite, which keeps no time zone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    false,
    func,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

#: openskill's default prior (PlackettLuce): mu 25, sigma 25/3, so a new player's display rating is 0.
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0

NAME_MAX = 24
ROOM_ID_LEN = 8
ROOM_NAME_MAX = 64
ROOM_STATUSES = ("waiting", "playing", "finished")


def utcnow() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A ``DateTime(timezone=True)`` that always gives back aware UTC datetimes.

    Binding: a naive value is taken as UTC; an aware one is converted to UTC. SQLite stores the
    naive UTC value; PostgreSQL a ``timestamptz``.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


#: Constraint and index names, the same as the migrations create (so autogenerate finds no drift).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every server table."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime(), dict[str, Any]: JSON()}


class User(Base):
    """A player account (registered, or a guest without a password).

    ``rating_mu``/``rating_sigma`` are the openskill rating (display rating = mu - 3*sigma);
    ``anhui_points`` the cumulative Anhui points (docs/rules.md section 2.1) of games whose rules award them.
    The name is unique ignoring ASCII case (index ``uq_users_name_lower``) and look-alikes
    (``name_key``, index ``uq_users_name_key``; :mod:`guandan.server.confusables`).
    """

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX), unique=True, nullable=False)
    #: the look-alike key of the name (``confusables.name_key``; unique, ``NULL`` for an old
    #: account whose key an older account held at migration 0009)
    name_key: Mapped[str | None] = mapped_column(String(NAME_MAX), nullable=True)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    is_guest: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    rating_mu: Mapped[float] = mapped_column(Float, nullable=False, default=DEFAULT_MU)
    rating_sigma: Mapped[float] = mapped_column(Float, nullable=False, default=DEFAULT_SIGMA)
    games_played: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    games_won: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    anhui_points: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    #: last authenticated request or table-socket message (friends' presence, :mod:`guandan.server.friends`)
    last_seen_at: Mapped[datetime | None] = mapped_column(nullable=True)

    @property
    def display_rating(self) -> float:
        """Conservative rating shown to people: ``mu - 3*sigma`` (0.0 for a new player)."""
        return self.rating_mu - 3.0 * self.rating_sigma

    def __repr__(self) -> str:
        return f"User(id={self.id!r}, name={self.name!r}, is_guest={self.is_guest!r})"


# Names are unique ignoring ASCII case ("Alice" and "alice" cannot both exist).
Index("uq_users_name_lower", func.lower(User.name), unique=True)
# Names that look alike (the same ``confusables.name_key``) cannot both exist (migration 0009).
Index("uq_users_name_key", User.name_key, unique=True)


class UserSession(Base):
    """A login session: SHA-256 (hex) of the ``gd_session`` cookie's token (``auth.token_key``), valid until ``expires_at`` (UTC)."""

    __tablename__ = "sessions"

    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(nullable=False)

    user: Mapped[User] = relationship(lazy="joined")


class Room(Base):
    """A table room. ``options`` is ``RuleSet.to_dict()``. While the game is played its record lives
    in ``game_events`` (one row per line, :mod:`guandan.server.gamestore`) and ``record`` is empty;
    once the game is over ``record`` holds the complete JSON Lines record (header + events,
    ``\\n``-terminated), assembled from those rows."""

    __tablename__ = "rooms"
    __table_args__ = (
        CheckConstraint("status IN ('waiting', 'playing', 'finished', 'damaged')", name="status"),
    )

    id: Mapped[str] = mapped_column(String(ROOM_ID_LEN), primary_key=True)
    name: Mapped[str] = mapped_column(String(ROOM_NAME_MAX), nullable=False, default="")
    preset: Mapped[str] = mapped_column(String(32), nullable=False, default="official")
    options: Mapped[dict[str, Any]] = mapped_column(nullable=False, default=dict)
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="waiting", index=True)
    seed: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    record: Mapped[str] = mapped_column(Text, nullable=False, default="")
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow, onupdate=utcnow)
    #: the R53 default clocks (60 s / 30 s) apply if the game starts with more than one person
    default_clocks: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    #: a board room (the daily challenge): the board's JSON text (``Board.to_json``); NULL otherwise
    board: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: until this time only the room's seats may see its game (watch, replay, review, history):
    #: a challenge board is secret until the day's challenge closes; NULL: public
    secret_until: Mapped[datetime | None] = mapped_column(nullable=True)
    #: the room's games move no rating and no Anhui points (不计分): a matched room filled with bots
    #: (:mod:`guandan.server.matchmaking`, issue 25); shown in the room and the history
    unrated: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())

    owner: Mapped[User | None] = relationship()
    seats: Mapped[list[RoomSeat]] = relationship(
        back_populates="room", cascade="all, delete-orphan", order_by="RoomSeat.seat"
    )


class RoomSeat(Base):
    """One of a room's four seats: a person (``user_id``), a bot (``bot``) or empty (both null)."""

    __tablename__ = "room_seats"
    __table_args__ = (CheckConstraint("seat >= 0 AND seat <= 3", name="seat"),)

    room_id: Mapped[str] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    bot: Mapped[str | None] = mapped_column(String(16), nullable=True)

    room: Mapped[Room] = relationship(back_populates="seats")
    user: Mapped[User | None] = relationship()


class GameEvent(Base):
    """One line of a live game's JSON Lines record (issue 10: append-only storage).

    ``idx`` 0 is the record's header, ``idx`` i >= 1 the game's event i - 1 (``Game.events``); the
    primary key (``room_id``, ``idx``) makes a second write of the same line fail, so one action
    is never stored twice. The rows of a room are deleted when its game is stored in ``games``.
    """

    __tablename__ = "game_events"
    __table_args__ = (CheckConstraint("idx >= 0", name="idx"),)

    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    line: Mapped[str] = mapped_column(Text, nullable=False)


class GameRow(Base):
    """A finished game: its complete JSON Lines record and the winning team (0: seats 0+2, 1: 1+3)."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    room_id: Mapped[str | None] = mapped_column(
        ForeignKey("rooms.id", ondelete="SET NULL"), nullable=True, index=True
    )
    preset: Mapped[str] = mapped_column(String(32), nullable=False)
    record: Mapped[str] = mapped_column(Text, nullable=False)
    winner_team: Mapped[int | None] = mapped_column(Integer, nullable=True)
    finished_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow, index=True)

    players: Mapped[list[GamePlayer]] = relationship(
        back_populates="game", cascade="all, delete-orphan", order_by="GamePlayer.seat"
    )


class GamePlayer(Base):
    """Who sat at a finished game's seat: a person (``user_id``) or a bot (``bot``)."""

    __tablename__ = "game_players"
    __table_args__ = (CheckConstraint("seat >= 0 AND seat <= 3", name="seat"),)

    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    bot: Mapped[str | None] = mapped_column(String(16), nullable=True)

    game: Mapped[GameRow] = relationship(back_populates="players")
    user: Mapped[User | None] = relationship()



class ReviewRow(Base):
    """A computed review of one deal of a finished game from one seat (issue 22, 复盘), for one
    budget: the cache of :mod:`guandan.server.reviews`. ``id`` is the job id the review was
    computed under (``GET /api/reviews/{id}`` keeps answering after a restart); ``result`` the
    review's JSON text (:func:`guandan.review.review_lines`)."""

    __tablename__ = "reviews"
    __table_args__ = (
        CheckConstraint("seat >= 0 AND seat <= 3", name="seat"),
        CheckConstraint("deal >= 1", name="deal"),
        Index("ix_reviews_key", "game_id", "deal", "seat", "budget", unique=True),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), nullable=False)
    deal: Mapped[int] = mapped_column(Integer, nullable=False)
    seat: Mapped[int] = mapped_column(Integer, nullable=False)
    budget: Mapped[str] = mapped_column(String(200), nullable=False)
    result: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)


TOURNAMENT_NAME_MAX = 64
TOURNAMENT_STATUSES = ("registering", "running", "finished")


class TournamentRow(Base):
    """A tournament run on the site. ``state`` is the engine's JSON (:func:`guandan.tournament.to_json`,
    the same text the ``guandan tournament`` CLI saves); ``version`` goes up by one with every change
    (optimistic concurrency: a change is written only over the version it was made from). ``name``,
    ``format``, ``status``, ``rounds_played`` and ``rounds_total`` copy the state for the list page."""

    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint("status IN ('registering', 'running', 'finished')", name="status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(TOURNAMENT_NAME_MAX), nullable=False)
    format: Mapped[str] = mapped_column(String(16), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="registering")
    rounds_played: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    rounds_total: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    organiser_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    state: Mapped[str] = mapped_column(Text, nullable=False)
    version: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow, index=True)

    organiser: Mapped[User | None] = relationship()


class TournamentDirectorRow(Base):
    """A co-director of a tournament: may change it like its organiser (not name other co-directors)."""

    __tablename__ = "tournament_directors"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True)

    user: Mapped[User] = relationship()


class TournamentAuditRow(Base):
    """One organiser action on a tournament: who, when, the operation, the values before and after
    (JSON), and the tournament ``version`` it produced. Never updated or deleted by the server."""

    __tablename__ = "tournament_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False, index=True
    )
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    operation: Mapped[str] = mapped_column(String(32), nullable=False)
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    before: Mapped[Any] = mapped_column(JSON, nullable=True)
    after: Mapped[Any] = mapped_column(JSON, nullable=True)

    user: Mapped[User | None] = relationship()


class TournamentTableRow(Base):
    """One table of an online tournament round (issue 21, :mod:`guandan.server.tournament_rounds`): the
    room that plays it, when the round started and when the match clock runs out (epoch seconds; null
    when the match is untimed), each pair's move-clock timeouts so far (R54), when each pair first had an
    open connection (lateness), the stored game's id, and ``state``: ``playing`` until the result is in
    the tournament (``entered``), ``forfeit`` (a pair was late, R54) or ``held`` (the engine refused the
    result: the organiser enters it). A drawn knock-out match plays its extra deal in a new room (``pending``)."""

    __tablename__ = "tournament_tables"
    __table_args__ = (
        CheckConstraint("state IN ('playing', 'entered', 'forfeit', 'held')", name="state"),
        Index("ux_tournament_tables_match", "tournament_id", "round", "table_no", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False)
    round: Mapped[int] = mapped_column(Integer, nullable=False)
    table_no: Mapped[int] = mapped_column(Integer, nullable=False)
    room_id: Mapped[str] = mapped_column(String(ROOM_ID_LEN), nullable=False, index=True)
    started_at: Mapped[float] = mapped_column(Float, nullable=False)
    deadline: Mapped[float | None] = mapped_column(Float, nullable=True)
    timeouts_a: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    timeouts_b: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    arrived_a: Mapped[float | None] = mapped_column(Float, nullable=True)
    arrived_b: Mapped[float | None] = mapped_column(Float, nullable=True)
    game_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state: Mapped[str] = mapped_column(String(16), nullable=False, default="playing")
    note: Mapped[str | None] = mapped_column(String(200), nullable=True)
    #: a drawn knock-out match (R58): its result (JSON) while the extra deal at level 2 is played in
    #: ``room_id`` (a new room, the same seats)
    pending: Mapped[str | None] = mapped_column(Text, nullable=True)


class TournamentTableCodeRow(Base):
    """The code of one pair at one physical table of a tournament round (issue 21 item 5, migrations
    ``0016`` and ``0021``): printed on that pair's half of the table card, it lets that pair (``side``
    ``"a"`` or ``"b"``) enter its result without an account (:mod:`guandan.server.tournament_claims`). ``pairing`` is the round's pairing stamp and the table's two
    entries when the code was made (``"<paired_at>|<a>-<b>"``): a round paired again gets new codes. Never
    shown to anyone but the directors."""

    __tablename__ = "tournament_table_codes"
    __table_args__ = (Index("ux_tournament_table_codes_side", "tournament_id", "round", "table_no", "side", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False)
    round: Mapped[int] = mapped_column(Integer, nullable=False)
    table_no: Mapped[int] = mapped_column(Integer, nullable=False)
    side: Mapped[str] = mapped_column(String(1), nullable=False, server_default="a")
    code: Mapped[str] = mapped_column(String(16), nullable=False)
    pairing: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)


class ChallengeRow(Base):
    """One day's duplicate challenge (issue 22): its boards, dealt once from the secure random
    source. ``day`` (the UTC date, ISO text ``YYYY-MM-DD``) is unique, so two processes creating
    the day's challenge at once store one (the second insert fails and reads the first)."""

    __tablename__ = "challenges"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    day: Mapped[str] = mapped_column(String(10), nullable=False, unique=True)
    preset: Mapped[str] = mapped_column(String(32), nullable=False)
    bots: Mapped[str] = mapped_column(String(16), nullable=False)
    n_boards: Mapped[int] = mapped_column(Integer, nullable=False)
    #: the boards' JSON: a list of ``Board.to_json`` objects, numbered 1..n_boards
    boards: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)


class ChallengePlayRow(Base):
    """One account's play of one board of a day's challenge. The unique key (challenge, board,
    user) makes a second start of the same board fail: a board is played once per account.
    ``result`` (the player's side's :func:`~guandan.duplicate.boards.side_result`) is set when the
    deal ends; ``ranked`` is false for guests (their plays are not in the field)."""

    __tablename__ = "challenge_plays"
    __table_args__ = (
        CheckConstraint("board >= 1", name="board"),
        CheckConstraint("seat >= 0 AND seat <= 3", name="seat"),
        Index("uq_challenge_plays_key", "challenge_id", "board", "user_id", unique=True),
        #: the plays still to settle (result NULL) and the count of results (ChallengeStore.scores)
        Index("ix_challenge_plays_results", "challenge_id", "result", "ranked"),
        #: the results stored since the last read (ChallengeStore.scores)
        Index("ix_challenge_plays_finished", "challenge_id", "finished_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenges.id", ondelete="CASCADE"), nullable=False)
    board: Mapped[int] = mapped_column(Integer, nullable=False)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True)
    seat: Mapped[int] = mapped_column(Integer, nullable=False)
    ranked: Mapped[bool] = mapped_column(Boolean, nullable=False)
    room_id: Mapped[str | None] = mapped_column(ForeignKey("rooms.id", ondelete="SET NULL"), nullable=True, index=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"), nullable=True)
    result: Mapped[int | None] = mapped_column(Integer, nullable=True)
    started_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)

    user: Mapped[User] = relationship()


class FriendLink(Base):
    """A friend request or friendship between two accounts, one row per pair (``user_low`` < ``user_high``).

    ``requester_id`` is the account that asked (or blocked); ``status`` is ``pending`` until the other
    accepts, then ``accepted``; ``blocked`` when ``requester_id`` blocked the other, ``blocked_both``
    when each blocked the other (rules:
    :mod:`guandan.server.friends`).
    """

    __tablename__ = "friend_links"
    __table_args__ = (
        CheckConstraint("user_low < user_high", name="pair_order"),
        CheckConstraint("status IN ('pending', 'accepted', 'blocked', 'blocked_both')", name="status"),
    )

    user_low: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    user_high: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True)
    requester_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="pending")
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)


class FriendInvite(Base):
    """An invitation of a friend (``to_id``) to a waiting room, by ``from_id``, until ``expires_at``.

    One per friend per room (``uq_friend_invites_room_id``); deleted with the room.
    """

    __tablename__ = "friend_invites"
    __table_args__ = (Index("uq_friend_invites_room_id", "room_id", "to_id", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"), nullable=False)
    from_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    to_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(nullable=False)


class AccountModeration(Base):
    """Moderation state of one account (issue 25 item 8; rules :mod:`guandan.server.moderation`): the admin
    role (set by ``guandan admin grant/revoke``), and the ends of a phrase mute and of a suspension
    (``NULL`` or past: none). A missing row means: no role, no mute, no suspension."""

    __tablename__ = "account_moderation"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    phrases_muted_until: Mapped[datetime | None] = mapped_column(nullable=True)
    suspended_until: Mapped[datetime | None] = mapped_column(nullable=True)


class ReportRow(Base):
    """A player's report of another (issue 25 item 8): a reason from :data:`guandan.server.moderation.REPORT_REASONS`,
    the room and/or finished game, and the deal number; ``open`` until an admin acts on it or dismisses it."""

    __tablename__ = "reports"
    __table_args__ = (CheckConstraint("status IN ('open', 'closed')", name="status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reporter_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True)
    reason: Mapped[str] = mapped_column(String(32), nullable=False)
    room_id: Mapped[str | None] = mapped_column(String(ROOM_ID_LEN), nullable=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"), nullable=True)
    deal_no: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(8), nullable=False, default="open", index=True)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(nullable=True)

    reporter: Mapped[User] = relationship(foreign_keys=[reporter_id])
    target: Mapped[User] = relationship(foreign_keys=[target_id])


class ModerationLogRow(Base):
    """One admin action (issue 25 item 8): who (``admin_name``; ``admin_id`` while the account exists,
    ``NULL`` from the command line), what (``action`` on ``target_name``, ``until`` for a mute or a
    suspension, the ``report_id`` acted on), when (``created_at``) and why (``why``). Rows are never changed."""

    __tablename__ = "moderation_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    admin_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    admin_name: Mapped[str] = mapped_column(String(NAME_MAX + 8), nullable=False)
    action: Mapped[str] = mapped_column(String(24), nullable=False)
    target_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    target_name: Mapped[str] = mapped_column(String(NAME_MAX), nullable=False)
    until: Mapped[datetime | None] = mapped_column(nullable=True)
    report_id: Mapped[int | None] = mapped_column(ForeignKey("reports.id", ondelete="SET NULL"), nullable=True)
    why: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow, index=True)


class TeamMatchRow(Base):
    """A duplicate team match (复式, issue 22 item 3): two teams of two pairs at two tables, the same
    boards (``boards``: ``Board.to_json`` objects, dealt once from the secure random source) at both
    (:mod:`guandan.server.teammatch`). ``seats``: JSON ``{"a": [[p, p], [p, p]], "b": [...]}``, each
    player an account name or ``"bot:<level>"``; ``ranked`` is false when a bot sits in (practice).
    ``tournament_id``/``round``/``table_no``: the tournament pairing it plays (issue 21 item 2), if any."""

    __tablename__ = "team_matches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(80), nullable=False)
    organiser_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True,
                                                     index=True)
    preset: Mapped[str] = mapped_column(String(32), nullable=False)
    n_boards: Mapped[int] = mapped_column(Integer, nullable=False)
    boards: Mapped[str] = mapped_column(Text, nullable=False)
    seats: Mapped[str] = mapped_column(Text, nullable=False)
    ranked: Mapped[bool] = mapped_column(Boolean, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=True,
                                                      index=True)
    round: Mapped[int | None] = mapped_column(Integer, nullable=True)
    table_no: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)


class TeamMatchPlayRow(Base):
    """One board of a team match at one of its two tables. The unique key (match, board, table)
    makes a second start of the same board at the same table fail: each board is played once per
    table. ``result`` is team A's signed result (:func:`guandan.server.teammatch.result_for_a`),
    set when the deal ends."""

    __tablename__ = "team_match_plays"
    __table_args__ = (
        CheckConstraint("board >= 1", name="board"),
        CheckConstraint("table_no >= 1 AND table_no <= 2", name="table_no"),
        Index("uq_team_match_plays_key", "match_id", "board", "table_no", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("team_matches.id", ondelete="CASCADE"), nullable=False)
    board: Mapped[int] = mapped_column(Integer, nullable=False)
    table_no: Mapped[int] = mapped_column(Integer, nullable=False)
    room_id: Mapped[str | None] = mapped_column(ForeignKey("rooms.id", ondelete="SET NULL"), nullable=True, index=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"), nullable=True)
    result: Mapped[int | None] = mapped_column(Integer, nullable=True)
    started_at: Mapped[datetime] = mapped_column(nullable=False, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)


class ServerFenceRow(Base):
    """The fencing token of the server that serves the database (issue 26 item 1): one row
    (``id`` 1). Every ``guandan serve`` bumps ``epoch`` once it holds the database lock, before it
    restores any live room; a single server's writes of game records check, in their own
    transaction, that ``epoch`` is still the one it set (:mod:`guandan.server.dblock`), so a server
    whose PostgreSQL lock lapsed cannot store a line after a newer server started."""

    __tablename__ = "server_fence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    epoch: Mapped[int] = mapped_column(BigInteger, nullable=False)
    claimed_at: Mapped[datetime | None] = mapped_column(nullable=True)

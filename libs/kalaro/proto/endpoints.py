"""Every request/reply contract, declared once: subject, request type, reply type.

A service binds an :class:`Endpoint` to its handler once, in its ``bootstrap.py``
(``route(endpoints.WALLET_BALANCE, balance)``: the handler must take the request type
and the service's deps, and return the reply type) and a caller sends through it
(``await request(nc, endpoints.WALLET_BALANCE, msg)`` returns a ``Balance``), so
neither repeats the other's types and mypy checks both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Generic, TypeVar

from kalaro.proto import approvals as ap
from kalaro.proto import auth as a
from kalaro.proto import bots as b
from kalaro.proto import engine as e
from kalaro.proto import history as h
from kalaro.proto import lobby as lb
from kalaro.proto import ranked as rk
from kalaro.proto import subjects as s
from kalaro.proto import wallet as w
from kalaro.proto import ws

Req = TypeVar("Req")
Rep = TypeVar("Rep")


@dataclass(frozen=True, slots=True)
class Endpoint(Generic[Req, Rep]):
    subject: str
    request: type[Req]
    reply: type[Rep]
    #: Asking twice does what asking once does (a read, or a write keyed so that a repeat
    #: changes nothing): a caller given no answer yet sends it again, which NATS may hand
    #: to another replica than one that is paused (``kalaro.bus.request``).
    idempotent: bool = False
    #: Served only by the owner of a table's partition (:func:`to_owner`): while nobody
    #: owns it (a takeover) NATS answers "no responders", nobody got the request, and
    #: the caller sends it again for a while (``kalaro.bus.request``), idempotent or not.
    owned: bool = False


# --- auth ---------------------------------------------------------------------------
AUTH_SIGN_UP = Endpoint(s.AUTH_SIGN_UP, a.SignUp, a.SignUpAccepted)
AUTH_VERIFY_EMAIL = Endpoint(s.AUTH_VERIFY_EMAIL, a.VerifyEmail, a.EmailVerified)
AUTH_RESEND_VERIFICATION = Endpoint(s.AUTH_RESEND_VERIFICATION, a.ResendVerification, a.LinkResent)
AUTH_REQUEST_PASSWORD_RESET = Endpoint(
    s.AUTH_REQUEST_PASSWORD_RESET, a.RequestPasswordReset, a.PasswordResetRequested
)
AUTH_RESET_PASSWORD = Endpoint(s.AUTH_RESET_PASSWORD, a.ResetPassword, a.TokenPair)
AUTH_SIGN_IN = Endpoint(s.AUTH_SIGN_IN, a.SignIn, a.SignedIn)
AUTH_GOOGLE_SIGN_IN = Endpoint(s.AUTH_GOOGLE_SIGN_IN, a.GoogleSignIn, a.TokenPair)
AUTH_REFRESH = Endpoint(s.AUTH_REFRESH, a.Refresh, a.TokenPair)
AUTH_SIGN_OUT = Endpoint(s.AUTH_SIGN_OUT, a.SignOut, a.SignedOut)
AUTH_PROFILE = Endpoint(s.AUTH_PROFILE, a.GetProfile, a.UserProfile, idempotent=True)
AUTH_PUBLIC_KEYS = Endpoint(s.AUTH_PUBLIC_KEYS, a.GetPublicKeys, a.PublicKeys, idempotent=True)
AUTH_REQUEST_APPROVAL = Endpoint(s.AUTH_REQUEST_APPROVAL, ap.RequestApproval, ap.Approval)
AUTH_LIST_APPROVALS = Endpoint(
    s.AUTH_LIST_APPROVALS, ap.ListApprovals, ap.ApprovalList, idempotent=True
)
AUTH_DECIDE_APPROVAL = Endpoint(s.AUTH_DECIDE_APPROVAL, ap.DecideApproval, ap.Approval)
AUTH_WITHDRAW_APPROVAL = Endpoint(s.AUTH_WITHDRAW_APPROVAL, ap.WithdrawApproval, ap.Approval)
AUTH_APPROVAL_TRAIL = Endpoint(
    s.AUTH_APPROVAL_TRAIL, ap.GetApprovalTrail, ap.ApprovalTrail, idempotent=True
)
AUTH_SEARCH_USERS = Endpoint(s.AUTH_SEARCH_USERS, a.SearchUsers, a.UserSearchResult)
AUTH_CREATE_BOT = Endpoint(s.AUTH_CREATE_BOT, a.CreateBot, a.UserProfile)

# --- wallet -------------------------------------------------------------------------
WALLET_WELCOME_GRANT = Endpoint(s.WALLET_WELCOME_GRANT, w.WelcomeGrant, w.WelcomeGranted)
WALLET_BALANCE = Endpoint(s.WALLET_BALANCE, w.GetBalance, w.Balance, idempotent=True)
WALLET_HISTORY = Endpoint(s.WALLET_HISTORY, w.GetHistory, w.History, idempotent=True)
# Keyed by the approval: a repeat (auth's retry) moves nothing and answers the first.
WALLET_GRANT_APPROVED = Endpoint(
    s.WALLET_GRANT_APPROVED, w.GrantApproved, w.Adjusted, idempotent=True
)
WALLET_ADJUST = Endpoint(s.WALLET_ADJUST, w.Adjust, w.Adjusted)
WALLET_PLACE_HOLDS = Endpoint(s.WALLET_PLACE_HOLDS, w.PlaceHolds, w.HoldsPlaced, idempotent=True)
WALLET_SETTLE = Endpoint(s.WALLET_SETTLE, w.SettleHand, w.Settlement, idempotent=True)
WALLET_VOID = Endpoint(s.WALLET_VOID, w.VoidHand, w.Settlement, idempotent=True)
WALLET_AUDIT = Endpoint(s.WALLET_AUDIT, w.Audit, w.AuditReport, idempotent=True)

# --- lobby --------------------------------------------------------------------------
LOBBY_CREATE_TABLE = Endpoint(s.LOBBY_CREATE_TABLE, lb.CreateTable, lb.TableCreated)
LOBBY_LIST_TABLES = Endpoint(s.LOBBY_LIST_TABLES, lb.ListTables, lb.TableList, idempotent=True)
LOBBY_GET_TABLE = Endpoint(s.LOBBY_GET_TABLE, lb.GetTable, lb.TableInfo, idempotent=True)
LOBBY_SIT = Endpoint(s.LOBBY_SIT, lb.Sit, lb.TableInfo)
LOBBY_LEAVE = Endpoint(s.LOBBY_LEAVE, lb.Leave, lb.TableInfo)
LOBBY_LEAVE_AFTER_HAND = Endpoint(s.LOBBY_LEAVE_AFTER_HAND, lb.LeaveAfterHand, lb.TableInfo)
LOBBY_SET_READY = Endpoint(s.LOBBY_SET_READY, lb.SetReady, lb.TableInfo)
LOBBY_REMOVE_PLAYER = Endpoint(s.LOBBY_REMOVE_PLAYER, lb.RemovePlayer, lb.TableInfo)
LOBBY_ALLOW_BACK = Endpoint(s.LOBBY_ALLOW_BACK, lb.AllowBack, lb.TableInfo)
LOBBY_INVITE_CODE = Endpoint(s.LOBBY_INVITE_CODE, lb.GetInviteCode, lb.InviteCode)
LOBBY_DEAL = Endpoint(s.LOBBY_DEAL, lb.Deal, lb.TableInfo)
LOBBY_END_TABLE = Endpoint(s.LOBBY_END_TABLE, lb.EndTable, lb.TableInfo)
LOBBY_CANCEL_TABLE = Endpoint(s.LOBBY_CANCEL_TABLE, lb.CancelTable, lb.TableInfo)
LOBBY_SET_CHAT = Endpoint(s.LOBBY_SET_CHAT, lb.SetChat, lb.TableInfo)
LOBBY_SEND_CHAT = Endpoint(s.LOBBY_SEND_CHAT, lb.SendChat, lb.ChatSent)
LOBBY_CREATE_PRACTICE = Endpoint(s.LOBBY_CREATE_PRACTICE, lb.CreatePractice, lb.TableCreated)
LOBBY_ADD_BOT = Endpoint(s.LOBBY_ADD_BOT, lb.AddBot, lb.TableInfo)
LOBBY_PRESENCE = Endpoint(s.LOBBY_PRESENCE, lb.ReportPresence, lb.PresenceNoted, idempotent=True)
LOBBY_HAND_FINISHED = Endpoint(s.LOBBY_HAND_FINISHED, lb.HandFinished, lb.HandFinished)
# ranked play (issue 34)
LOBBY_OPEN_RANKED = Endpoint(
    s.LOBBY_OPEN_RANKED, lb.OpenRankedTable, lb.RankedTableOpened, idempotent=True
)
LOBBY_SET_MIN_RATING = Endpoint(s.LOBBY_SET_MIN_RATING, lb.SetMinRating, lb.TableInfo)

# --- history ------------------------------------------------------------------------
HISTORY_LIST_HANDS = Endpoint(s.HISTORY_LIST_HANDS, h.ListHands, h.HandsList, idempotent=True)
HISTORY_GET_HAND = Endpoint(s.HISTORY_GET_HAND, h.GetStoredHand, e.HandRecord, idempotent=True)
HISTORY_EXPORT_HANDS = Endpoint(
    s.HISTORY_EXPORT_HANDS, h.ExportHands, h.RecordsPage, idempotent=True
)
HISTORY_PLAYER_STATS = Endpoint(
    s.HISTORY_PLAYER_STATS, h.GetPlayerStats, h.PlayerStats, idempotent=True
)

# --- ranked (issue 34) --------------------------------------------------------------
RANKED_RATINGS = Endpoint(s.RANKED_RATINGS, rk.GetRatings, rk.Ratings, idempotent=True)
RANKED_LEADERBOARD = Endpoint(
    s.RANKED_LEADERBOARD, rk.GetLeaderboard, rk.Leaderboard, idempotent=True
)
RANKED_QUEUE_JOIN = Endpoint(s.RANKED_QUEUE_JOIN, rk.JoinQueue, rk.QueueStatus, idempotent=True)
RANKED_QUEUE_LEAVE = Endpoint(s.RANKED_QUEUE_LEAVE, rk.LeaveQueue, rk.QueueStatus, idempotent=True)
RANKED_QUEUE_STATUS = Endpoint(
    s.RANKED_QUEUE_STATUS, rk.GetQueueStatus, rk.QueueStatus, idempotent=True
)
RANKED_STANDING = Endpoint(s.RANKED_STANDING, rk.GetStanding, rk.Standing, idempotent=True)
RANKED_FAIR_PLAY = Endpoint(s.RANKED_FAIR_PLAY, rk.GetFairPlay, rk.FairPlayReport, idempotent=True)
RANKED_ADMIN_ACT = Endpoint(s.RANKED_ADMIN_ACT, rk.AdminAct, rk.AdminActed)

# --- bots ---------------------------------------------------------------------------
BOTS_SEAT = Endpoint(s.BOTS_SEAT, b.SeatBot, b.BotSeated)


# --- engine workers: one set per game (cached: callers ask on every request) --------
@cache
def engine_start(game: str) -> Endpoint[e.StartHand, e.HandStarted]:
    return Endpoint(s.engine_start(game), e.StartHand, e.HandStarted, idempotent=True)


@cache
def engine_act(game: str) -> Endpoint[e.Act, e.Acted]:
    return Endpoint(s.engine_act(game), e.Act, e.Acted)


@cache
def engine_view(game: str) -> Endpoint[e.GetView, ws.HandView]:
    return Endpoint(s.engine_view(game), e.GetView, ws.HandView, idempotent=True)


@cache
def engine_cancel(game: str) -> Endpoint[e.CancelHand, e.HandCancelled]:
    return Endpoint(s.engine_cancel(game), e.CancelHand, e.HandCancelled)


@cache
def engine_record(game: str) -> Endpoint[e.GetHandRecord, e.HandRecord]:
    return Endpoint(s.engine_record(game), e.GetHandRecord, e.HandRecord, idempotent=True)


@cache
def engine_outcome(game: str) -> Endpoint[e.GetHandOutcome, e.HandOutcomeReport]:
    return Endpoint(s.engine_outcome(game), e.GetHandOutcome, e.HandOutcomeReport, idempotent=True)


@cache
def engine_my_hands(game: str) -> Endpoint[e.ListMyHands, e.MyHands]:
    return Endpoint(s.engine_my_hands(game), e.ListMyHands, e.MyHands, idempotent=True)


# --- the one routing decision for per-table engine requests -------------------------
def to_owner(endpoint: Endpoint[Req, Rep], table_id: str) -> Endpoint[Req, Rep]:
    """``endpoint`` as served by the engine replica owning ``table_id``'s partition:
    ``engine.<game>.act`` becomes ``engine.<game>.act.<partition>``."""
    return at_partition(endpoint, s.partition_of(table_id))


@cache
def at_partition(endpoint: Endpoint[Req, Rep], partition: int | str) -> Endpoint[Req, Rep]:
    """``endpoint`` on one partition's subject (``"*"``: every partition's, for a
    replica serving all of them)."""
    return Endpoint(
        s.at_partition(endpoint.subject, partition),
        endpoint.request,
        endpoint.reply,
        idempotent=endpoint.idempotent,
        owned=True,
    )

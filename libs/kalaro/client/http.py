"""REST side of the SDK: typed wrappers over the gateway's ``/api`` routes.

Reads (``GET``) answered ``503 unavailable`` (no service answered the gateway: one is
restarting) are tried again with the client's :class:`~kalaro.client.retry.Backoff`
until its deadline; writes are not, since nothing says whether they applied.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, TypeVar

import httpx
import msgspec

from kalaro.client.retry import DEFAULT_RETRY_SECONDS, Backoff, retryable
from kalaro.client.transport import Transport
from kalaro.client.wire import MAX_SIZE
from kalaro.proto import approvals as ap
from kalaro.proto import auth as a
from kalaro.proto import lobby as lb
from kalaro.proto import ranked as rk
from kalaro.proto import wallet as w
from kalaro.proto.engine import HandRecord
from kalaro.proto.errors import HTTP_ERROR

T = TypeVar("T")


class ApiError(Exception):
    """The gateway answered with an error: ``status``, stable ``code``, ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class KalaroClient:
    """``retry``: how long reads and moves keep trying while the gateway answers
    ``unavailable`` (seconds, or a whole :class:`Backoff`; 0 raises at once)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 15.0,
        retry: Backoff | float = DEFAULT_RETRY_SECONDS,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # ``headers`` go with every REST call (e.g. a proxy's ``X-Forwarded-For``).
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout, headers=headers)
        self.tokens: a.TokenPair | None = None
        self.retry = retry if isinstance(retry, Backoff) else Backoff(deadline=float(retry))

    async def __aenter__(self) -> KalaroClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    @property
    def user(self) -> a.UserProfile:
        if self.tokens is None:
            raise RuntimeError("not signed in")
        return self.tokens.user

    @property
    def access_token(self) -> str:
        if self.tokens is None:
            raise RuntimeError("not signed in")
        return self.tokens.access_token

    async def call(
        self,
        method: str,
        path: str,
        reply_type: type[T],
        body: Any = None,
        *,
        retry_safe: bool | None = None,
        **params: Any,
    ) -> T:
        """One REST call, decoded as ``reply_type``; :class:`ApiError` when refused.

        ``retry_safe`` (default: for ``GET``) tries an ``unavailable`` answer, or a
        connection that failed with no answer, again with :attr:`retry` until its
        deadline.
        """
        if retry_safe is None:
            retry_safe = method == "GET"
        if not retry_safe:
            return await self._call_once(method, path, reply_type, body, params)
        return await self.retry.run(
            lambda: self._call_once(method, path, reply_type, body, params),
            should_retry=_retry_safe_failure,
            what=f"{method} {path}",
        )

    async def _call_once(
        self, method: str, path: str, reply_type: type[T], body: Any, params: dict[str, Any]
    ) -> T:
        headers = {"Authorization": f"Bearer {self.tokens.access_token}"} if self.tokens else {}
        query = {k: v for k, v in params.items() if v is not None}
        content = msgspec.json.encode(body) if body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        response = await self._http.request(
            method, path, content=content, headers=headers, params=query
        )
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
                raise ApiError(response.status_code, error["code"], error["message"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(response.status_code, HTTP_ERROR, response.text) from None
        result: T = msgspec.json.decode(response.content, type=reply_type)
        return result

    # --- accounts ---------------------------------------------------------------------
    async def sign_up(self, email: str, password: str, display_name: str) -> a.TokenPair:
        """Create an account, then sign in with its password.

        Sign-up answers the same whether or not the email is known (a verification link
        is mailed); if the address already had an account, the sign-in fails as a wrong
        password would. Until the mailed link is followed (:meth:`verify_email`, then
        :meth:`refresh`) the account has no welcome grant and sits at free tables only.
        """
        body = {"email": email, "password": password, "display_name": display_name}
        await self.call("POST", "/api/auth/sign-up", a.SignUpAccepted, body)
        return await self.sign_in(email, password)

    async def sign_in(self, email: str, password: str, code: str | None = None) -> a.TokenPair:
        """Sign in; the gateway's device cookie stays in this client's cookie jar, so
        later sign-ins are a known device. After a ``code_required`` error, call again
        with the 6-digit ``code`` that was mailed."""
        body = {"email": email, "password": password}
        if code is not None:
            body["code"] = code
        self.tokens = await self.call("POST", "/api/auth/sign-in", a.TokenPair, body)
        return self.tokens

    async def verify_email(self, token: str) -> a.EmailVerified:
        """Confirm an email address with the token of its mailed link (once per link;
        :meth:`refresh` afterwards for a token that says so)."""
        return await self.call("POST", "/api/auth/verify", a.EmailVerified, {"token": token})

    async def reset_password(self, token: str, password: str) -> a.TokenPair:
        """Choose a new password with a mailed reset link's token; signs in."""
        body = {"token": token, "password": password}
        path = "/api/auth/password-reset/confirm"
        self.tokens = await self.call("POST", path, a.TokenPair, body)
        return self.tokens

    async def google_sign_in(self, id_token: str) -> a.TokenPair:
        self.tokens = await self.call(
            "POST", "/api/auth/google", a.TokenPair, {"id_token": id_token}
        )
        return self.tokens

    async def refresh(self) -> a.TokenPair:
        if self.tokens is None:
            raise RuntimeError("not signed in")
        body = {"refresh_token": self.tokens.refresh_token}
        self.tokens = await self.call("POST", "/api/auth/refresh", a.TokenPair, body)
        return self.tokens

    async def sign_out(self) -> None:
        if self.tokens is not None:
            body = {"refresh_token": self.tokens.refresh_token}
            await self.call("POST", "/api/auth/sign-out", a.SignedOut, body)
            self.tokens = None

    async def me(self) -> a.UserProfile:
        return await self.call("GET", "/api/me", a.UserProfile)

    # --- approvals: what a player asks of admins ---------------------------------------
    async def request_host(self, note: str = "") -> ap.Approval:
        body = {"kind": "host_access", "note": note}
        return await self.call("POST", "/api/approvals", ap.Approval, body)

    async def request_credits(self, amount: int, note: str = "") -> ap.Approval:
        body = {"kind": "credits", "amount": amount, "note": note}
        return await self.call("POST", "/api/approvals", ap.Approval, body)

    async def my_approvals(self, kind: str | None = None) -> ap.ApprovalList:
        return await self.call("GET", "/api/approvals", ap.ApprovalList, kind=kind)

    async def withdraw(self, approval_id: str) -> ap.Approval:
        return await self.call("POST", f"/api/approvals/{approval_id}/withdraw", ap.Approval)

    # --- wallet -----------------------------------------------------------------------
    async def balance(self) -> w.Balance:
        return await self.call("GET", "/api/wallet", w.Balance)

    async def history(self, limit: int = 50, before: int | None = None) -> w.History:
        return await self.call("GET", "/api/wallet/history", w.History, limit=limit, before=before)

    # --- admin ------------------------------------------------------------------------
    async def approvals(
        self, kind: str | None = None, status: str | None = "pending"
    ) -> ap.ApprovalList:
        """The admins' queue: every kind unless ``kind`` says which."""
        return await self.call(
            "GET", "/api/admin/approvals", ap.ApprovalList, kind=kind, status=status
        )

    async def approval_trail(self, approval_id: str) -> ap.ApprovalTrail:
        """One request and its audit trail (admins)."""
        return await self.call("GET", f"/api/admin/approvals/{approval_id}", ap.ApprovalTrail)

    async def decide(self, approval_id: str, approve: bool, reason: str = "") -> ap.Approval:
        body = {"approve": approve, "reason": reason}
        path = f"/api/admin/approvals/{approval_id}/decision"
        return await self.call("POST", path, ap.Approval, body)

    async def grant(
        self, user_id: str, amount: int, reason: str, kind: str = "grant"
    ) -> w.Adjusted:
        body = {"user_id": user_id, "amount": amount, "reason": reason, "kind": kind}
        return await self.call("POST", "/api/admin/grants", w.Adjusted, body)

    async def audit(self) -> w.AuditReport:
        return await self.call("GET", "/api/admin/audit", w.AuditReport)

    # --- tables -----------------------------------------------------------------------
    async def list_tables(self, game: str | None = None, open_seats: bool = False) -> lb.TableList:
        return await self.call(
            "GET", "/api/tables", lb.TableList, game=game, open_seats=str(open_seats).lower()
        )

    async def create_table(
        self,
        game: str,
        bet: int,
        *,
        ruleset: str = "kalaro",
        options: dict[str, Any] | None = None,
        private: bool = False,
        chat_enabled: bool = True,
        min_rating: float | None = None,
    ) -> lb.TableCreated:
        body: dict[str, Any] = {
            "game": game, "bet": bet, "ruleset": ruleset, "options": options or {},
            "private": private, "chat_enabled": chat_enabled,
        }  # fmt: skip
        if min_rating is not None:  # issue 34: public tables only
            body["min_rating"] = min_rating
        return await self.call("POST", "/api/tables", lb.TableCreated, body)

    async def get_table(self, table_id: str, invite_code: str | None = None) -> lb.TableInfo:
        """One table (a private one needs its ``invite_code`` unless you host or sit there)."""
        path = f"/api/tables/{table_id}"
        return await self.call("GET", path, lb.TableInfo, invite_code=invite_code)

    async def sit(
        self, table_id: str, seat: int | None = None, invite_code: str | None = None
    ) -> lb.TableInfo:
        body = {"seat": seat, "invite_code": invite_code}
        return await self.call("POST", f"/api/tables/{table_id}/sit", lb.TableInfo, body)

    async def leave(self, table_id: str) -> lb.TableInfo:
        return await self.call("POST", f"/api/tables/{table_id}/leave", lb.TableInfo, {})

    async def leave_after_hand(self, table_id: str, leave: bool = True) -> lb.TableInfo:
        path = f"/api/tables/{table_id}/leave-after-hand"
        return await self.call("POST", path, lb.TableInfo, {"leave": leave})

    async def ready(self, table_id: str, ready: bool = True, entropy: str = "") -> lb.TableInfo:
        body = {"ready": ready, "entropy": entropy}
        return await self.call("POST", f"/api/tables/{table_id}/ready", lb.TableInfo, body)

    async def deal(self, table_id: str) -> lb.TableInfo:
        return await self.call("POST", f"/api/tables/{table_id}/deal", lb.TableInfo, {})

    async def remove_player(self, table_id: str, seat: int) -> lb.TableInfo:
        path = f"/api/tables/{table_id}/remove"
        return await self.call("POST", path, lb.TableInfo, {"seat": seat})

    async def end_table(self, table_id: str) -> lb.TableInfo:
        return await self.call("POST", f"/api/tables/{table_id}/end", lb.TableInfo, {})

    async def cancel_table(self, table_id: str) -> lb.TableInfo:
        return await self.call("POST", f"/api/tables/{table_id}/cancel", lb.TableInfo, {})

    async def set_chat(self, table_id: str, enabled: bool) -> lb.TableInfo:
        path = f"/api/tables/{table_id}/chat-setting"
        return await self.call("POST", path, lb.TableInfo, {"enabled": enabled})

    async def set_min_rating(self, table_id: str, min_rating: float | None) -> lb.TableInfo:
        """The host sets (None: clears) the rating a sit needs at a public table."""
        path = f"/api/tables/{table_id}/min-rating"
        return await self.call("POST", path, lb.TableInfo, {"min_rating": min_rating})

    async def hand_record(self, table_id: str, hand_id: str) -> HandRecord:
        path = f"/api/tables/{table_id}/hands/{hand_id}"
        return await self.call("GET", path, HandRecord)

    def table_socket(
        self,
        *,
        reconnect: bool = True,
        keep_frames: bool = True,
        transport: Transport = "websockets",
        max_size: int = MAX_SIZE,
    ) -> Any:
        """The table WebSocket, over the ``websockets`` library unless ``transport="fast"``
        (the SDK's own reader, for load generators)."""
        from kalaro.client.socket import TableSocket

        return TableSocket(
            self,
            reconnect=reconnect,
            keep_frames=keep_frames,
            transport=transport,
            max_size=max_size,
        )

    # --- ranked play (issue 34) ---------------------------------------------------------
    async def join_queue(self, game: str, bet: int) -> rk.QueueStatus:
        """Join the ranked queue; a ``seated`` frame on the socket, and :meth:`queue_status`,
        say where the matcher seated you."""
        body = {"game": game, "bet": bet}
        return await self.call("POST", "/api/queue", rk.QueueStatus, body)

    async def leave_queue(self) -> rk.QueueStatus:
        return await self.call("DELETE", "/api/queue", rk.QueueStatus)

    async def queue_status(self) -> rk.QueueStatus:
        return await self.call("GET", "/api/queue", rk.QueueStatus)

    async def ratings(self, user_id: str | None = None) -> rk.Ratings:
        """A player's ratings per game (yours by default)."""
        return await self.call("GET", f"/api/ratings/{user_id or self.user.user_id}", rk.Ratings)

    async def leaderboard(self, game: str, period: str = "all") -> rk.Leaderboard:
        return await self.call("GET", "/api/leaderboard", rk.Leaderboard, game=game, period=period)

    # --- practice tables and bots ---------------------------------------------------------
    async def create_practice(
        self, game: str, *, ruleset: str = "kalaro", options: dict[str, Any] | None = None
    ) -> lb.TableCreated:
        """A zero-bet table against bots, you in seat 0; tap Ready and it deals itself."""
        body = {"game": game, "ruleset": ruleset, "options": options or {}}
        return await self.call("POST", "/api/practice", lb.TableCreated, body)

    async def add_bot(self, table_id: str, seat: int | None = None) -> lb.TableInfo:
        """Seat a bot at your zero-bet table (``seat`` None: the first free seat)."""
        path = f"/api/tables/{table_id}/bots"
        return await self.call("POST", path, lb.TableInfo, {"seat": seat})


def _retry_safe_failure(exc: BaseException) -> bool:
    """For a call safe to repeat: ``unavailable``, or no answer at all (a kept-alive
    connection the server closed as it was reused, a refused or reset connection)."""
    return retryable(exc) or isinstance(exc, httpx.TransportError)

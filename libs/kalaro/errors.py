"""Typed errors that cross the bus, free of any bus dependency.

Pure rules (``services/*/rules.py``) raise :class:`ServiceError`; keeping it here, not in
:mod:`kalaro.bus`, means importing a rule loads neither nats nor sqlalchemy.
"""

from __future__ import annotations

from kalaro.proto import errors as codes


class ServiceError(Exception):
    """Raised by a service function to answer a request with a typed error.

    The runner turns it into an :class:`~kalaro.proto.errors.ErrorReply`; the caller's
    :func:`kalaro.bus.request` raises :class:`RemoteError` with the same code.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        user_ids: tuple[str, ...] = (),
        retry_after: int = 0,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.user_ids = user_ids  # who the error is about, as data (see ErrorReply)
        # Seconds until the caller may really try again (a ``throttled`` refusal): the
        # gateway sends it as ``Retry-After``. 0: not said.
        self.retry_after = retry_after


class RemoteError(ServiceError):
    """A request answered with an error (or not answered at all)."""


def unavailable(subject: str) -> RemoteError:
    return RemoteError(codes.UNAVAILABLE, f"no service answered on {subject}")

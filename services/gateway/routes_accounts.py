"""REST routes for mailed links: verifying an email, asking for a new link, resetting
a password.

A mailed link opens the web client's page (``/#/verify?token=…``); its button POSTs
the token here. A GET never spends a token: mail scanners fetch links before people
click them. Links mailed before the page existed (``/api/auth/verify?token=…``) are
sent to the page too.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from litestar import Controller, Request, get, post
from litestar.di import Provide
from litestar.params import JSONBody, Parameter
from litestar.response import Redirect

from kalaro.proto import api, endpoints
from kalaro.proto import auth as a
from services.gateway import access
from services.gateway.routes import Claims, forward, provide_claims


class AccountLinksController(Controller):
    path = "/api/auth"
    tags = ["auth"]

    @get(
        "/verify",
        summary="An old verification link: opens the page that confirms it (changes nothing)",
        status_code=303,
    )
    async def verify_page(
        self, token: Annotated[str, Parameter(min_length=1, max_length=512)]
    ) -> Redirect:
        return Redirect(f"/#/verify?token={quote(token, safe='')}", status_code=303)

    @post("/verify", status_code=200, summary="Confirm an email address with a mailed token")
    async def verify(self, request: Request, data: JSONBody[api.TokenBody]) -> a.EmailVerified:  # type: ignore[type-arg]
        return await forward(request, endpoints.AUTH_VERIFY_EMAIL, a.VerifyEmail(token=data.token))

    @post(
        "/verify/resend",
        status_code=202,
        summary="Trade an expired verification link for a new one (mailed)",
    )
    async def resend(self, request: Request, data: JSONBody[api.TokenBody]) -> a.LinkResent:  # type: ignore[type-arg]
        message = a.ResendVerification(token=data.token)
        return await forward(request, endpoints.AUTH_RESEND_VERIFICATION, message)

    @post(
        "/password-reset",
        status_code=202,
        summary="Mail a password reset link (answers alike whether or not the email is known)",
    )
    async def request_reset(
        self,
        request: Request,  # type: ignore[type-arg]
        data: JSONBody[api.PasswordResetBody],
    ) -> a.PasswordResetRequested:
        message = a.RequestPasswordReset(email=data.email)
        return await forward(request, endpoints.AUTH_REQUEST_PASSWORD_RESET, message)

    @post(
        "/password-reset/confirm",
        status_code=200,
        summary="Choose a new password with a reset link's token; signs in, ends other sessions",
    )
    async def reset(self, request: Request, data: JSONBody[api.NewPasswordBody]) -> a.TokenPair:  # type: ignore[type-arg]
        message = a.ResetPassword(token=data.token, password=data.password)
        return await forward(request, endpoints.AUTH_RESET_PASSWORD, message)


class MyLinksController(Controller):
    path = "/api/me"
    tags = ["me"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @post(
        "/verification-link",
        status_code=202,
        summary="Mail me a new link to confirm my email address",
    )
    async def resend(self, request: Request, claims: Claims) -> a.LinkResent:  # type: ignore[type-arg]
        message = a.ResendVerification(user_id=claims.user_id)
        return await forward(request, endpoints.AUTH_RESEND_VERIFICATION, message)

"""Emails, names, passwords, roles and views: the auth service's pure account rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import BOT_EMAIL_DOMAIN, Role
from services.auth import addresses, rules
from tests.unit.auth.auth_helpers import STRONG, account, refused

BOT_EMAIL = f"seven@{BOT_EMAIL_DOMAIN}"
BOT_SECRET = "x" * rules.MIN_BOT_PASSWORD


def test_emails_are_trimmed_and_lower_cased() -> None:
    assert addresses.normalize_email("  Ana.Cruz@Example.COM ") == "ana.cruz@example.com"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "ana",
        "ana@",
        "@example.com",
        "ana@example",
        "a b@example.com",
        "ana@-x.com",
        "ana@example.c",
        "ana\u0000@example.com",
        "x" * 65 + "@example.com",
        "a@" + "b" * 250 + ".com",
    ],
)
def test_malformed_emails_are_refused(raw: str) -> None:
    assert "one valid email" in refused(codes.BAD_REQUEST, addresses.normalize_email, raw)


def test_display_names_are_tidied() -> None:
    assert rules.clean_display_name("  Juan \t dela   Cruz ") == "Juan dela Cruz"
    # NFC: a decomposed "é" is stored as one character.
    assert rules.clean_display_name("Jose\u0301") == "Jos\u00e9"


def test_display_name_refusals() -> None:
    assert "enter a display name" in refused(codes.BAD_REQUEST, rules.clean_display_name, " \n")
    too_long = "x" * (rules.MAX_DISPLAY_NAME + 1)
    assert "at most 40" in refused(codes.BAD_REQUEST, rules.clean_display_name, too_long)
    assert "control" in refused(codes.BAD_REQUEST, rules.clean_display_name, "Ana\u200bB")


@given(st.text(max_size=60))
def test_a_display_name_is_clean_or_refused(raw: str) -> None:
    refusal: str | None = None
    try:
        name = rules.clean_display_name(raw)
    except ServiceError as err:
        refusal = err.code
    if refusal is not None:
        assert refusal == codes.BAD_REQUEST
        return
    assert name == name.strip() and "  " not in name
    assert 1 <= len(name) <= rules.MAX_DISPLAY_NAME and name.isprintable()
    assert rules.clean_display_name(name) == name  # tidying twice changes nothing


def test_sign_up_fields() -> None:
    assert rules.sign_up_fields(" Ana@Example.com", " Ana ", STRONG) == ("ana@example.com", "Ana")
    assert "reserved" in refused(codes.BAD_REQUEST, rules.sign_up_fields, BOT_EMAIL, "B", STRONG)
    weak = refused(codes.WEAK_PASSWORD, rules.sign_up_fields, "ana@example.com", "Ana", "password1")
    assert weak.startswith("password too weak: ")


def test_sign_in_refuses_absurd_passwords_before_hashing() -> None:
    assert rules.sign_in_password_fits("x" * rules.MAX_SIGN_IN_PASSWORD)
    assert not rules.sign_in_password_fits("x" * (rules.MAX_SIGN_IN_PASSWORD + 1))


def test_bot_fields() -> None:
    assert rules.bot_fields(BOT_EMAIL, "Bot Seven", BOT_SECRET) == (BOT_EMAIL, "Bot Seven")
    people = refused(codes.BAD_REQUEST, rules.bot_fields, "ana@example.com", "B", BOT_SECRET)
    assert BOT_EMAIL_DOMAIN in people
    short = BOT_SECRET[:-1]
    assert "16 to 1024" in refused(codes.WEAK_PASSWORD, rules.bot_fields, BOT_EMAIL, "B", short)


def test_admin_fields_allow_an_empty_password_meaning_generate_one() -> None:
    assert rules.admin_fields("Boss@Example.com", "Admin", "") == ("boss@example.com", "Admin")
    weak = refused(codes.WEAK_PASSWORD, rules.admin_fields, "boss@example.com", "A", "password")
    assert weak.startswith("admin password too weak: ")


def test_google_names_fall_back_to_the_email() -> None:
    assert rules.google_display_name(" Ana  Cruz ", "ana@example.com") == "Ana Cruz"
    assert rules.google_display_name("", "ana.cruz@example.com") == "ana.cruz"
    long_local = "a" * 60 + "@example.com"
    assert rules.google_display_name("", long_local) == "a" * rules.MAX_DISPLAY_NAME


def test_roles_are_stored_in_one_order() -> None:
    assert rules.roles_text(["admin", "player", "host", "admin"]) == "player,host,admin"
    assert rules.roles_from_text("admin,player,nonsense") == ("player", "admin")
    assert rules.roles_from_text("") == ()
    assert rules.with_roles(("player",), "host") == ("player", "host")
    assert rules.with_roles(("player", "host"), *rules.ADMIN_ROLES) == rules.ADMIN_ROLES


@given(st.lists(st.sampled_from(rules.ROLE_ORDER)))
def test_roles_round_trip(roles: list[Role]) -> None:
    text = rules.roles_text(roles)
    assert rules.roles_from_text(text) == tuple(r for r in rules.ROLE_ORDER if r in roles)
    assert rules.roles_text(rules.roles_from_text(text)) == text


def test_admin_and_bot_checks() -> None:
    admin = account(roles=("player", "host", "admin"))
    rules.require_admin(admin, "admins only")
    assert refused(codes.FORBIDDEN, rules.require_admin, account(), "admins only") == "admins only"
    assert refused(codes.FORBIDDEN, rules.require_admin, None, "admins only") == "admins only"
    rules.require_bot(account(roles=rules.BOT_ROLES))
    assert "not a bot" in refused(codes.CONFLICT, rules.require_bot, account())


def test_who_may_ask_to_host() -> None:
    ana = account()
    assert rules.require_may_request_host(ana) is ana
    assert refused(codes.NOT_FOUND, rules.require_may_request_host, None) == "no such user"
    host = account(roles=("player", "host"))
    assert "already host" in refused(codes.CONFLICT, rules.require_may_request_host, host)
    bot = account(roles=rules.BOT_ROLES)
    assert "bots do not" in refused(codes.FORBIDDEN, rules.require_may_request_host, bot)


def test_notes_and_reasons() -> None:
    assert rules.clean_note("  please  ") == "please"
    long = "x" * (rules.MAX_NOTE + 1)
    assert refused(codes.BAD_REQUEST, rules.clean_note, long).startswith("notes have")
    assert refused(codes.BAD_REQUEST, rules.clean_note, long, "reasons").startswith("reasons")


def test_paging_limits() -> None:
    rules.check_list_page(rules.MAX_LIST, 0)
    for limit, offset in ((0, 0), (rules.MAX_LIST + 1, 0), (10, -1)):
        refused(codes.BAD_REQUEST, rules.check_list_page, limit, offset)


def test_search_text() -> None:
    assert rules.search_text("  Ana   CRUZ ", 10, 0) == "ana cruz"
    assert "enter part" in refused(codes.BAD_REQUEST, rules.search_text, "   ", 10, 0)
    too_long = "x" * (rules.MAX_SEARCH_QUERY + 1)
    assert "at most 100" in refused(codes.BAD_REQUEST, rules.search_text, too_long, 10, 0)
    assert "limit" in refused(codes.BAD_REQUEST, rules.search_text, "ana", 51, 0)
    deep = rules.MAX_SEARCH_OFFSET + 1
    assert "narrow" in refused(codes.BAD_REQUEST, rules.search_text, "ana", 10, deep)


def test_like_patterns_match_wildcards_literally() -> None:
    assert rules.like_escape(r"50%_off\now") == r"50\%\_off\\now"


def test_a_profile_shows_no_credentials() -> None:
    linked = account(google_sub="g-123", email_verified=False, roles=("player", "host"))
    view = rules.profile(linked)
    assert view.created_at == "2026-01-01T00:00:00.000+00:00"
    assert (view.google_linked, view.email_verified, view.roles) == (
        True,
        False,
        ("player", "host"),
    )
    assert "password" not in repr(view) and "$argon2id" not in repr(view)
    assert rules.profile(account()).google_linked is False


def test_the_welcome_event_names_the_new_account() -> None:
    event = rules.registered(account())
    assert (event.user_id, event.email, event.display_name) == ("u_ana", "ana@example.com", "Ana")

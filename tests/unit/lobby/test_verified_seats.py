"""An account whose email is not verified sits at free tables only."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from services.lobby.access import require_verified_for_bets
from tests.unit.lobby.lobby_helpers import ANA, record

UNVERIFIED = replace(ANA, email_verified=False)


def test_an_unverified_account_sits_at_no_table_with_a_bet() -> None:
    with pytest.raises(ServiceError) as err:
        require_verified_for_bets(record(bet=10).info, UNVERIFIED)
    assert err.value.code == codes.EMAIL_UNVERIFIED
    assert "confirm your email" in err.value.message


def test_free_tables_and_verified_accounts_pass() -> None:
    require_verified_for_bets(record(bet=0).info, UNVERIFIED)
    require_verified_for_bets(record(bet=10).info, ANA)

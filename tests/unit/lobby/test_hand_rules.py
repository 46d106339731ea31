"""Deal preconditions, hand end, closing and the practice sweep: pure rules."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import HandFinished
from services.lobby import access, hands, rules
from tests.unit.lobby.lobby_helpers import ANA, BEN, CRIS, HOST, NOW, record, seated

SEED = ("bb" * 32, "cc" * 32)


def test_deal_needs_every_seat_taken_and_ready() -> None:
    rec = seated(record(), ANA, BEN)
    with pytest.raises(ServiceError, match="1 empty seat"):
        hands.claim_deal(rec, HOST, "h_1", NOW)
    full = rules.set_ready(seated(record(), ANA, BEN, CRIS, ready=True), BEN, False, "")
    with pytest.raises(ServiceError, match="not ready: Ben"):
        hands.claim_deal(full, HOST, "h_1", NOW)
    with pytest.raises(ServiceError) as caught:
        hands.claim_deal(full, ANA, "h_1", NOW)
    assert caught.value.code == codes.FORBIDDEN


def test_claim_then_playing_then_finished() -> None:
    rec = seated(record(), ANA, BEN, CRIS, ready=True)
    claimed = hands.claim_deal(rec, HOST, "h_1", NOW)
    assert (claimed.info.status, claimed.info.hand_id, claimed.dealing_since) == (
        "dealing",
        "h_1",
        NOW,
    )
    with pytest.raises(ServiceError, match="already in progress"):
        hands.claim_deal(claimed, HOST, "h_2", NOW)
    playing = hands.start_playing(claimed, "h_1")
    assert (playing.info.status, playing.info.hand_no) == ("playing", 1)
    with pytest.raises(rules.DealAborted):
        hands.start_playing(playing, "h_other")
    flagged = rules.leave_after_hand(playing, CRIS, True)
    done = HandFinished(table_id="t1", hand_id="h_1", next_dealer=1, away_seats=(1,))
    after = hands.finish_hand(flagged, done, SEED)
    assert after.info.status == "waiting" and after.info.hand_id is None
    # Ben was away and Cris asked to leave: both vacated; Ana stays, not ready.
    assert [s.user_id if s else None for s in after.info.seats] == [ANA.user_id, None, None]
    assert after.info.seats[0] is not None and not after.info.seats[0].ready
    assert (after.server_seed, after.info.seed_commitment) == SEED
    assert (after.last_hand_id, after.info.dealer) == ("h_1", 1)
    # Redelivered: the same record back, so nothing is written or published.
    assert hands.finish_hand(after, done, SEED) is after


def test_failed_deal_reverts_only_its_own_claim() -> None:
    claimed = hands.claim_deal(seated(record(), ANA, BEN, CRIS, ready=True), HOST, "h_1", NOW)
    short = hands.short_seats(claimed, ["u_ben", "u_nobody"])
    assert short == (1,)
    back = hands.revert_deal(claimed, "h_1", unready=set(short))
    assert back.info.status == "waiting" and back.info.hand_id is None
    assert [s.ready for s in back.info.seats if s] == [True, False, True]
    assert back.server_seed == claimed.server_seed
    fresh = hands.revert_deal(claimed, "h_1", unready=None, fresh_seed=SEED)
    assert not any(s.ready for s in fresh.info.seats if s)
    assert (fresh.server_seed, fresh.info.seed_commitment) == SEED
    assert hands.revert_deal(claimed, "h_other", unready=None) is claimed


def test_a_deal_is_stale_only_while_dealing_and_only_when_old() -> None:
    ready = seated(record(), ANA, BEN, CRIS, ready=True)
    claimed = hands.claim_deal(ready, HOST, "h_1", NOW)
    assert hands.stale_deal(claimed, NOW + 10, 35) is None
    assert hands.stale_deal(claimed, NOW + 36, 35) == "h_1"
    assert hands.stale_deal(ready, NOW + 36, 35) is None
    assert hands.stale_deal(hands.start_playing(claimed, "h_1"), NOW + 36, 35) is None


def test_end_needs_no_hand_in_progress_and_cancel_remembers_the_hand() -> None:
    rec = seated(record(), ANA, BEN, CRIS, ready=True)
    playing = hands.start_playing(hands.claim_deal(rec, HOST, "h_1", NOW), "h_1")
    with pytest.raises(ServiceError, match="hand in progress"):
        rules.end_table(playing, HOST)
    cancelled = rules.cancel_table(playing, HOST)
    assert (cancelled.info.status, cancelled.info.hand_id) == ("cancelled", None)
    assert cancelled.cancelled_hand_id == "h_1"
    assert rules.cancel_table(cancelled, HOST) is cancelled  # repeating is allowed
    ended = rules.end_table(rec, HOST)
    assert ended.info.status == "ended"
    with pytest.raises(ServiceError, match="already ended"):
        rules.cancel_table(ended, HOST)
    assert rules.ended_if_waiting(playing) is playing
    assert rules.ended_if_waiting(rec).info.status == "ended"


@pytest.mark.parametrize(
    ("status", "version", "seen", "verdict"),
    [
        ("ended", None, None, "forget"),
        ("dealing", None, None, "wait"),
        ("playing", 7, 6, "moving"),
        ("playing", 7, None, "moving"),
        ("playing", 7, 7, "cancel"),
        ("playing", None, None, "cancel"),
        ("waiting", None, None, "end"),
    ],
)
def test_the_practice_sweep_decides(
    status: str, version: int | None, seen: int | None, verdict: str
) -> None:
    info = replace(record(bet=0, practice=True).info, status=status)
    assert rules.practice_idle(info, version, seen) == verdict


def test_a_gone_practice_table_is_forgotten() -> None:
    assert rules.practice_idle(None, None, None) == "forget"


def test_private_tables_are_seen_by_members_or_with_the_code() -> None:
    rec = seated(record(private=True, invite_code="s3cret-code"), ANA)
    assert access.may_watch(rec, ANA, None, NOW)
    assert not access.may_watch(rec, BEN, None, NOW)
    assert not access.may_watch(rec, BEN, "wrong", NOW)
    assert access.may_watch(rec, BEN, "s3cret-code", NOW)
    assert access.listed(rec.info, HOST, None, False)
    assert not access.listed(rec.info, BEN, None, False)
    assert access.invite_code(rec, HOST, NOW).invite_code == "s3cret-code"
    with pytest.raises(ServiceError) as caught:
        access.invite_code(rec, BEN, NOW)
    assert caught.value.code == codes.NOT_FOUND  # as if there were no such table

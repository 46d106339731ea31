"""Dealing a hand (holds, engine start, racing deals), the hand's end, ending and cancelling."""

from __future__ import annotations

import asyncio

from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import ServiceError
from kalaro.bus.codec import encode
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from kalaro.proto.wallet import HoldRequest
from services.lobby import handlers
from services.lobby.tables import Lobby, TableRecord
from tests.integration.lobby.harness import LobbyHarness, commitment, eventually, refused


async def _finish(
    nc: NATS, table_id: str, hand_id: str, next_dealer: int | None = 1, voided: bool = False
) -> None:
    """What the engine publishes when a hand is over: on the durable EVENTS stream."""
    event = lb.HandFinished(
        table_id=table_id, hand_id=hand_id, next_dealer=next_dealer, voided=voided
    )
    await nc.jetstream().publish(subjects.HAND_FINISHED, encode(event))


async def _consumer_caught_up(lobby: LobbyHarness) -> None:
    """Wait until the hands consumer has handled everything published so far.

    It handles the stream in order, so once a marker hand published now is applied,
    every earlier event has been too.
    """
    marker, _ = await lobby.full_table("tongits", 0)
    dealt = await lobby.deal(lobby.host, marker.table_id)
    assert dealt.hand_id is not None
    await _finish(lobby.nc, marker.table_id, dealt.hand_id)

    async def applied() -> bool:
        return (await lobby.get(marker.table_id)).status == "waiting"

    await eventually(applied)


async def test_deal_places_holds_then_starts_the_hand(lobby: LobbyHarness) -> None:
    table, players = await lobby.full_table("tongits", 20)
    before = await lobby.record(table.table_id)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.status == "playing" and dealt.hand_no == 1
    assert dealt.hand_id is not None and dealt.hand_id.startswith("h_")
    assert dealt.seed_commitment == table.seed_commitment  # committed before Ready

    (holds,) = lobby.peers.holds
    assert holds.hand_id == dealt.hand_id and holds.table_id == table.table_id
    assert holds.holds == tuple(HoldRequest(user_id=p.user_id, amount=80) for p in players)
    (start,) = lobby.peers.starts
    assert start.hand_id == dealt.hand_id and start.table_id == table.table_id
    assert start.bet == 20 and start.options == table.options
    assert [p.user_id for p in start.players] == [p.user_id for p in players]
    assert start.server_seed == before.server_seed
    assert commitment(start.server_seed) == table.seed_commitment
    assert start.entropy == before.entropy and all(start.entropy)
    assert start.dealer is None
    assert lobby.peers.voids == [] and lobby.peers.cancels == []
    statuses = [t.status for t in lobby.frames.tables(table.table_id)]
    assert statuses[-2:] == ["dealing", "playing"]


async def test_deal_is_for_the_host_with_everyone_ready(lobby: LobbyHarness) -> None:
    table, (ana, _, _) = await lobby.full_table("tongits", 10, ready=False)
    message = await refused(codes.FORBIDDEN, lobby.deal(ana, table.table_id))
    assert "host" in message
    await lobby.ready(ana, table.table_id)
    message = await refused(codes.CONFLICT, lobby.deal(lobby.host, table.table_id))
    assert "not ready" in message and "Ben" in message and "Cris" in message
    assert "Ana" not in message
    half = (await lobby.create("tongits", 10)).table
    await lobby.sit(ana, half.table_id)
    await lobby.ready(ana, half.table_id)
    message = await refused(codes.CONFLICT, lobby.deal(lobby.host, half.table_id))
    assert "2 empty seat" in message
    assert lobby.peers.holds == [] and lobby.peers.starts == []


async def test_racing_deals_on_two_replicas_deal_once(
    lobby: LobbyHarness, nats_server: NatsServer, redis: RedisLink
) -> None:
    """Two lobby processes (own NATS connections), several Deals at once: one hand."""
    table, _ = await lobby.full_table("tongits", 10)
    other_nc = await connect(nats_server.url, "lobby-replica-2")
    try:
        replica = Lobby(other_nc, redis, prefix=lobby.prefix, clock=lobby.clock)
        lobby.peers.delay = 0.05  # keep the winner's deal in flight while others try
        deal = lb.Deal(caller=lobby.host, table_id=table.table_id)
        outcomes = await asyncio.gather(
            *(handlers.deal(deal, r) for r in [lobby.lobby, replica] * 3), return_exceptions=True
        )
    finally:
        await other_nc.drain()
    won = [o for o in outcomes if isinstance(o, lb.TableInfo)]
    lost = [o for o in outcomes if isinstance(o, ServiceError)]
    assert len(won) == 1 and len(lost) == 5, outcomes
    assert all(e.code == codes.CONFLICT for e in lost)
    assert len(lobby.peers.holds) == 1 and len(lobby.peers.starts) == 1
    info = await lobby.get(table.table_id)
    assert (
        info.status == "playing" and info.hand_id == won[0].hand_id == lobby.peers.starts[0].hand_id
    )


async def test_insufficient_funds_back_to_waiting_nothing_started(lobby: LobbyHarness) -> None:
    table, (_, ben, _) = await lobby.full_table("tongits", 10)
    lobby.peers.short = {ben.user_id}  # spent his credits at another table meanwhile
    message = await refused(codes.INSUFFICIENT_FUNDS, lobby.deal(lobby.host, table.table_id))
    assert "Ben" in message and "40" in message
    info = await lobby.get(table.table_id)
    assert info.status == "waiting" and info.hand_id is None and info.hand_no == 0
    ready = [s.ready if s else None for s in info.seats]
    assert ready == [True, False, True]  # only the short player sits out
    assert lobby.peers.starts == []
    assert len(lobby.peers.holds) == 1
    rec = await lobby.record(table.table_id)
    assert rec.entropy[1] == "" and rec.entropy[0] and rec.entropy[2]
    # Once Ben has credits again and taps Ready, the deal goes through.
    lobby.peers.short = set()
    await lobby.ready(ben, table.table_id)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.status == "playing" and len(lobby.peers.starts) == 1


async def test_engine_failure_voids_holds_and_reverts(lobby: LobbyHarness) -> None:
    table, _ = await lobby.full_table("mahjong", 10)
    lobby.peers.engine_error = codes.INTERNAL
    message = await refused(codes.INTERNAL, lobby.deal(lobby.host, table.table_id))
    assert "could not start" in message
    (holds,) = lobby.peers.holds
    (start,) = lobby.peers.starts
    assert [v.hand_id for v in lobby.peers.voids] == [holds.hand_id] == [start.hand_id]
    info = await lobby.get(table.table_id)
    assert info.status == "waiting" and info.hand_id is None and info.hand_no == 0
    # The seed went out in a failed StartHand: a new one, and everyone re-readies.
    assert info.seed_commitment != table.seed_commitment
    assert all(s is not None and not s.ready for s in info.seats)
    assert (await lobby.record(table.table_id)).server_seed != start.server_seed


async def test_engine_silent_hand_is_cancelled_at_the_engine_only(lobby: LobbyHarness) -> None:
    table, _ = await lobby.full_table("tongits", 10)
    lobby.lobby.dealer.engine_timeout = 0.2
    lobby.peers.delay = 0.5  # the engine answers too late: did it start or not?
    message = await refused(codes.UNAVAILABLE, lobby.deal(lobby.host, table.table_id))
    assert "could not start" in message
    hand_id = lobby.peers.starts[0].hand_id
    # Only the engine may decide a hand it may have started: its cancel voids it.
    assert [c.hand_id for c in lobby.peers.cancels] == [hand_id]
    assert lobby.peers.voids == []
    assert (await lobby.get(table.table_id)).status == "waiting"


async def test_zero_bet_deals_without_holds(lobby: LobbyHarness) -> None:
    table, _ = await lobby.full_table("tongits", 0)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.status == "playing"
    assert lobby.peers.holds == [] and len(lobby.peers.starts) == 1


async def test_no_seat_changes_during_a_hand(lobby: LobbyHarness) -> None:
    table, (ana, _, _) = await lobby.full_table("tongits", 10)
    await lobby.deal(lobby.host, table.table_id)
    leave = lb.Leave(caller=ana, table_id=table.table_id)
    message = await refused(codes.CONFLICT, lobby.call(subjects.LOBBY_LEAVE, leave, lb.TableInfo))
    assert "hand in progress" in message and "leave after this hand" in message
    await refused(codes.CONFLICT, lobby.ready(ana, table.table_id))
    remove = lb.RemovePlayer(caller=lobby.host, table_id=table.table_id, seat=0)
    await refused(codes.CONFLICT, lobby.call(subjects.LOBBY_REMOVE_PLAYER, remove, lb.TableInfo))
    end = lb.EndTable(caller=lobby.host, table_id=table.table_id)
    await refused(codes.CONFLICT, lobby.call(subjects.LOBBY_END_TABLE, end, lb.TableInfo))
    await refused(codes.CONFLICT, lobby.deal(lobby.host, table.table_id))
    await refused(codes.CONFLICT, lobby.sit(lobby.user("Eli"), table.table_id))
    assert (await lobby.get(table.table_id)).status == "playing"


async def test_hand_finished_back_to_waiting(lobby: LobbyHarness) -> None:
    table, (ana, ben, cris) = await lobby.full_table("tongits", 10)
    flag = lb.LeaveAfterHand(caller=ben, table_id=table.table_id, leave=True)
    await lobby.call(subjects.LOBBY_LEAVE_AFTER_HAND, flag, lb.TableInfo)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.hand_id is not None
    played_seed = lobby.peers.starts[0].server_seed
    # Flagging during the hand works too.
    flag = lb.LeaveAfterHand(caller=cris, table_id=table.table_id, leave=True)
    await lobby.call(subjects.LOBBY_LEAVE_AFTER_HAND, flag, lb.TableInfo)

    await _finish(lobby.nc, table.table_id, dealt.hand_id, next_dealer=2)

    async def waiting() -> bool:
        return (await lobby.get(table.table_id)).status == "waiting"

    await eventually(waiting)
    info = await lobby.get(table.table_id)
    assert info.hand_id is None and info.hand_no == 1 and info.dealer == 2
    assert info.seats[1] is None and info.seats[2] is None  # left after the hand
    assert info.seats[0] == lb.SeatInfo(user_id=ana.user_id, display_name="Ana", ready=False)
    assert info.seed_commitment != dealt.seed_commitment
    rec = await lobby.record(table.table_id)
    assert rec.server_seed != played_seed
    assert commitment(rec.server_seed) == info.seed_commitment
    assert rec.entropy == ("", "", "")
    assert lobby.frames.tables(table.table_id)[-1] == info

    # A redelivered (or stale) HandFinished changes nothing.
    await lobby.ready(ana, table.table_id)
    before = await lobby.get(table.table_id)
    await _finish(lobby.nc, table.table_id, dealt.hand_id, next_dealer=0)
    await _finish(lobby.nc, table.table_id, "h_not_this_tables_hand", next_dealer=0)
    await _consumer_caught_up(lobby)
    after = await lobby.get(table.table_id)
    assert after == before
    assert after.seats[0] is not None and after.seats[0].ready


async def test_next_hand_after_one_finished(lobby: LobbyHarness) -> None:
    table, players = await lobby.full_table("tongits", 10)
    first = await lobby.deal(lobby.host, table.table_id)
    assert first.hand_id is not None
    await _finish(lobby.nc, table.table_id, first.hand_id, next_dealer=1)

    async def waiting() -> bool:
        return (await lobby.get(table.table_id)).status == "waiting"

    await eventually(waiting)
    await refused(codes.CONFLICT, lobby.deal(lobby.host, table.table_id))  # nobody ready
    for p in players:
        await lobby.ready(p, table.table_id)
    second = await lobby.deal(lobby.host, table.table_id)
    assert second.hand_no == 2 and second.hand_id not in (None, first.hand_id)
    assert [s.dealer for s in lobby.peers.starts] == [None, 1]
    assert lobby.peers.starts[0].server_seed != lobby.peers.starts[1].server_seed
    # The first hand's event delivered again while the second is played: ignored.
    await _finish(lobby.nc, table.table_id, first.hand_id, next_dealer=0)
    await _consumer_caught_up(lobby)
    still = await lobby.get(table.table_id)
    assert (still.status, still.hand_id, still.version) == (
        "playing",
        second.hand_id,
        second.version,
    )


async def test_end_table_between_hands(lobby: LobbyHarness) -> None:
    table, (ana, _, _) = await lobby.full_table("tongits", 10)
    end = lb.EndTable(caller=ana, table_id=table.table_id)
    await refused(codes.FORBIDDEN, lobby.call(subjects.LOBBY_END_TABLE, end, lb.TableInfo))
    end = lb.EndTable(caller=lobby.host, table_id=table.table_id)
    ended = await lobby.call(subjects.LOBBY_END_TABLE, end, lb.TableInfo)
    assert ended.status == "ended"
    listed = await lobby.call(subjects.LOBBY_LIST_TABLES, lb.ListTables(), lb.TableList)
    assert table.table_id not in [t.table_id for t in listed.tables]
    await refused(codes.CONFLICT, lobby.call(subjects.LOBBY_END_TABLE, end, lb.TableInfo))
    await refused(codes.CONFLICT, lobby.sit(lobby.user("Eli"), table.table_id))
    await refused(codes.CONFLICT, lobby.deal(lobby.host, table.table_id))
    assert lobby.frames.tables(table.table_id)[-1].status == "ended"


async def test_cancel_during_a_hand_cancels_it_at_the_engine_only(lobby: LobbyHarness) -> None:
    table, (ana, _, _) = await lobby.full_table("tongits", 10)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.hand_id is not None
    cancel = lb.CancelTable(caller=ana, table_id=table.table_id)
    await refused(codes.FORBIDDEN, lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo))
    cancel = lb.CancelTable(caller=lobby.host, table_id=table.table_id)
    cancelled = await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    assert cancelled.status == "cancelled" and cancelled.hand_id is None
    assert [(c.table_id, c.hand_id) for c in lobby.peers.cancels] == [
        (table.table_id, dealt.hand_id)
    ]
    assert lobby.peers.voids == []  # the engine's cancel voids (or settles) the hand
    listed = await lobby.call(subjects.LOBBY_LIST_TABLES, lb.ListTables(), lb.TableList)
    assert table.table_id not in [t.table_id for t in listed.tables]
    assert lobby.frames.tables(table.table_id)[-1].status == "cancelled"
    # Cancelling again repeats the (idempotent) engine cancel; the engine's late
    # HandFinished for the voided hand does not reopen the table.
    await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    assert len(lobby.peers.cancels) == 2 and lobby.peers.voids == []
    await _finish(lobby.nc, table.table_id, dealt.hand_id, voided=True)
    await _consumer_caught_up(lobby)
    assert (await lobby.get(table.table_id)).status == "cancelled"


async def test_cancel_between_hands_needs_no_void(lobby: LobbyHarness) -> None:
    table, _ = await lobby.full_table("tongits", 10)
    cancel = lb.CancelTable(caller=lobby.host, table_id=table.table_id)
    cancelled = await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    assert cancelled.status == "cancelled"
    assert lobby.peers.cancels == [] and lobby.peers.voids == []


async def test_cancel_while_dealing_stops_the_hand_started_late(lobby: LobbyHarness) -> None:
    table, _ = await lobby.full_table("tongits", 10)
    lobby.peers.delay = 0.3
    deal = asyncio.ensure_future(lobby.deal(lobby.host, table.table_id))

    async def dealing() -> bool:
        return (await lobby.get(table.table_id)).status == "dealing"

    await eventually(dealing)
    cancel = lb.CancelTable(caller=lobby.host, table_id=table.table_id)
    cancelled = await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    assert cancelled.status == "cancelled"
    await refused(codes.CONFLICT, deal)
    hand_id = lobby.peers.holds[0].hand_id
    # The deal noticed the table was cancelled and stopped its own hand again.
    assert hand_id in [c.hand_id for c in lobby.peers.cancels]
    assert lobby.peers.voids == []  # the engine's cancel decides, and voids
    assert (await lobby.get(table.table_id)).status == "cancelled"


async def test_a_cancel_the_engine_did_not_answer_is_retried_until_it_does(
    lobby: LobbyHarness,
) -> None:
    table, _ = await lobby.full_table("mahjong", 10)
    dealt = await lobby.deal(lobby.host, table.table_id)
    lobby.peers.cancel_error = codes.UNAVAILABLE  # the engine is restarting
    cancel = lb.CancelTable(caller=lobby.host, table_id=table.table_id)
    cancelled = await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    assert cancelled.status == "cancelled"  # closed at once all the same
    assert lobby.peers.voids == []  # never voided behind the engine's back
    assert await lobby.lobby.retry_cancels() == 0  # still down: kept
    assert [c.hand_id for c in lobby.peers.cancels] == [dealt.hand_id] * 2
    lobby.peers.cancel_error = None
    assert await lobby.lobby.retry_cancels() == 1
    assert await lobby.lobby.retry_cancels() == 0  # confirmed ones are forgotten
    assert [c.hand_id for c in lobby.peers.cancels] == [dealt.hand_id] * 3
    assert lobby.peers.voids == []


async def _orphan_deal(lobby: LobbyHarness, table_id: str) -> None:
    """What a replica that died right after claiming the table leaves: the deal noted
    in flight, the table ``dealing`` its hand, no holds, no StartHand."""
    store = lobby.lobby.dealer._store
    await store.redis.zadd(store.deals, {f"{table_id}|h_orphan": lobby.clock()})

    def claim(rec: TableRecord) -> TableRecord:
        return replace(
            rec,
            info=replace(rec.info, status="dealing", hand_id="h_orphan"),
            dealing_since=lobby.clock(),
        )

    await lobby.lobby.writer.update(table_id, claim)


async def test_interrupted_deal_is_rescued_by_the_next_deal(lobby: LobbyHarness) -> None:
    table, (ana, _, _) = await lobby.full_table("tongits", 10)
    await _orphan_deal(lobby, table.table_id)
    await refused(codes.CONFLICT, lobby.deal(lobby.host, table.table_id))  # still fresh
    assert lobby.peers.voids == []
    lobby.clock.advance(lobby.lobby.stale_deal_seconds + 1)
    await refused(codes.FORBIDDEN, lobby.deal(ana, table.table_id))  # only the host may
    assert lobby.peers.cancels == []
    message = await refused(codes.CONFLICT, lobby.deal(lobby.host, table.table_id))
    assert "interrupted" in message
    # The dead replica may have sent StartHand: the engine's cancel decides (and voids).
    assert lobby.peers.voids == []
    assert [c.hand_id for c in lobby.peers.cancels] == ["h_orphan"]
    info = await lobby.get(table.table_id)
    assert info.status == "waiting" and info.hand_id is None
    assert info.seed_commitment != table.seed_commitment


async def test_interrupted_deal_is_rescued_by_the_sweep(lobby: LobbyHarness) -> None:
    """Nobody has to tap anything: a table never stays stuck ``dealing``."""
    table, (ana, ben, cris) = await lobby.full_table("tongits", 10)
    await _orphan_deal(lobby, table.table_id)
    assert await lobby.lobby.rescue_stale_deals() == 0  # in flight, for all we know
    assert (await lobby.get(table.table_id)).status == "dealing"
    lobby.clock.advance(lobby.lobby.stale_deal_seconds + 1)
    assert await lobby.lobby.rescue_stale_deals() == 1
    assert await lobby.lobby.rescue_stale_deals() == 0  # done once
    assert [c.hand_id for c in lobby.peers.cancels] == ["h_orphan"]
    info = await lobby.get(table.table_id)
    assert info.status == "waiting" and info.hand_id is None
    assert not any(s.ready for s in info.seats if s)  # the seed changed: Ready again
    # The table deals again, and a finished deal leaves nothing for the sweep.
    for who in (ana, ben, cris):
        await lobby.ready(who, table.table_id)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.status == "playing"
    lobby.clock.advance(lobby.lobby.stale_deal_seconds + 1)
    assert await lobby.lobby.rescue_stale_deals() == 0
    assert (await lobby.get(table.table_id)).status == "playing"


async def test_seats_the_engine_marked_away_sit_out_the_next_deal(lobby: LobbyHarness) -> None:
    table, (ana, ben, cris) = await lobby.full_table("tongits", 10)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.hand_id is not None
    flag = lb.LeaveAfterHand(caller=cris, table_id=table.table_id, leave=True)
    await lobby.call(subjects.LOBBY_LEAVE_AFTER_HAND, flag, lb.TableInfo)
    # Ben timed out twice in a row: the engine names his seat in the hand's end.
    event = lb.HandFinished(
        table_id=table.table_id, hand_id=dealt.hand_id, next_dealer=2, away_seats=(1,)
    )
    await lobby.nc.jetstream().publish(subjects.HAND_FINISHED, encode(event))

    async def waiting() -> bool:
        return (await lobby.get(table.table_id)).status == "waiting"

    await eventually(waiting)
    info = await lobby.get(table.table_id)
    # Vacated like a seat that asked to leave after the hand; the table carries on.
    assert info.seats[1] is None and info.seats[2] is None
    assert info.seats[0] == lb.SeatInfo(user_id=ana.user_id, display_name="Ana", ready=False)
    assert info.dealer == 2 and info.hand_no == 1
    # Ben may sit down again, and with a full table the next hand deals.
    for who, seat in ((ben, 1), (cris, 2)):
        await lobby.sit(who, table.table_id, seat=seat)
    for who in (ana, ben, cris):
        await lobby.ready(who, table.table_id)
    again = await lobby.deal(lobby.host, table.table_id)
    assert again.status == "playing" and again.hand_no == 2

"""Practice tables and bots, through the whole stack as a client sees them.

One person with the SDK plays against the bots service's bots, which sit, ready and
move through the same gateway (REST and WebSocket). The person plays by a simple policy
over the legal moves its own view lists. The stack runs the bots with a short thinking
delay (``KALARO_BOT_THINK_MS`` in ``stack.py``) so whole hands fit in a few seconds.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from kalaro.bots import Policy, legal_actions, policy_for
from kalaro.client import ApiError, KalaroClient, TableSocket
from kalaro.client.socket import FrameError
from kalaro.games import mahjong, tongits
from kalaro.launcher import SERVICES
from kalaro.proto import lobby as lb
from kalaro.proto import ws as w
from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, Stack

PASSWORD = "correct horse battery staple"
VIEWS: dict[str, type[Any]] = {"tongits": tongits.View, "mahjong": mahjong.View}

# How long the bots may take to tap Ready after a hand: seconds normally, but a busy
# machine (three busy loops on two cores) has been seen to need more than 10.
BOTS_READY_SECONDS = 30


@pytest.fixture
async def person(stack: Stack, unique: str) -> AsyncIterator[KalaroClient]:
    async with KalaroClient(stack.base_url) as client:
        email = f"player-{unique}@example.com"
        await client.sign_up(email, PASSWORD, "Emay")
        await asyncio.to_thread(stack.verify_email, email)  # the welcome grant follows
        for _ in range(100):  # the welcome grant arrives through JetStream
            if (await client.balance()).balance >= 1000:
                break
            await asyncio.sleep(0.1)
        yield client


class CallsDraw:
    """The smart Tongits policy, except that it calls Draw whenever it may (so the bots
    have a Fight/Fold to answer)."""

    name = "calls-draw"

    def __init__(self) -> None:
        self._smart = policy_for("tongits", "smart")

    def choose(self, view: Any, rng: random.Random) -> Any | None:
        for action in view.legal:
            if isinstance(action, tongits.CallDraw):
                return action
        return self._smart.choose(view, rng)


async def play(
    client: KalaroClient,
    socket: TableSocket,
    table_id: str,
    game: str,
    policy: Policy,
    *,
    hands: int = 1,
    timeout: float = 45,
) -> list[w.HandResult]:
    """Play our seat until ``hands`` hands have ended: ready between hands, move when the
    view offers moves (a stale version means someone moved first: decide again)."""
    rng = random.Random(7)
    state = socket.state(table_id)
    tried: tuple[str, int] | None = None
    readied = -1
    async with asyncio.timeout(timeout):
        while len(state.results) < hands:
            table, view = state.table, state.view
            mine = table.seats[0] if table is not None else None
            if (
                table is not None and table.status == "waiting" and mine is not None
                and not mine.ready and readied != table.hand_no
            ):  # fmt: skip
                readied = table.hand_no
                await client.ready(table_id, True, entropy=f"person-{rng.random()}")
                continue
            if view is not None and (view.hand_id, view.version) != tried:
                tried = (view.hand_id, view.version)
                typed = msgspec.convert(view.view, VIEWS[game])
                if legal_actions(game, typed):
                    action = policy.choose(typed, rng)
                    try:
                        await socket.act(table_id, msgspec.to_builtins(action), view.version)
                    except FrameError as exc:
                        if exc.code != "stale_version":  # a bot answered first: fine
                            raise
                    continue
            snapshot = (table, view, len(state.results))
            await socket.wait_for(
                lambda s=snapshot: (state.table, state.view, len(state.results)) != s, 15
            )
    return state.results


def no_bot_timed_out(record: Any, bots: set[int]) -> None:
    """The engine applied no time-out to a bot: every bot answered inside its window."""
    timed_out = [seat for seat, action in record.actions if action["type"] == "time_out"]
    assert not bots & set(timed_out), f"bots timed out: {record.actions}"


async def unchanged_books(client: KalaroClient, stack: Stack, balance_before: int) -> None:
    balance = await client.balance()
    assert (balance.balance, balance.held) == (balance_before, 0)
    kinds = [e.kind for e in (await client.history()).entries]
    assert kinds == ["welcome"], kinds  # no holds, no settlement: no credits moved
    async with KalaroClient(stack.base_url) as admin:
        await admin.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)
        audit = await admin.audit()
    assert audit.total == 0 and not audit.mismatched_accounts and not audit.negative_available


def assert_practice_table(table: lb.TableInfo, person: KalaroClient, seats: int) -> None:
    assert table.practice and table.bet == 0 and table.max_loss == 0
    assert table.host_id == person.user.user_id
    human = table.seats[0]
    assert human is not None and human.user_id == person.user.user_id and not human.is_bot
    bots = table.seats[1:]
    assert len(bots) == seats - 1
    assert all(s is not None and s.is_bot and s.ready for s in bots), bots
    assert len({s.user_id for s in bots if s is not None}) == seats - 1


async def test_tongits_practice_plays_hands_with_no_credits_moving(
    stack: Stack, person: KalaroClient
) -> None:
    before = (await person.balance()).balance
    created = await person.create_practice("tongits")
    table = created.table
    assert_practice_table(table, person, 3)
    assert created.invite_code is None
    listed = await person.list_tables()
    assert table.table_id not in {t.table_id for t in listed.tables}  # never listed

    socket = person.table_socket()
    await socket.connect()
    await socket.subscribe(table.table_id)
    # Two hands: after the first, the bots ready themselves, the person taps Ready, and
    # the table deals itself again.
    policy = policy_for("tongits", "random")
    results = await play(person, socket, table.table_id, "tongits", policy, hands=2)
    assert len({r.hand_id for r in results}) == 2
    for result in results:
        assert result.payments == (0, 0, 0)
        assert result.players[0] == person.user.user_id
        record = await person.hand_record(table.table_id, result.hand_id)
        assert [p.is_bot for p in record.players] == [False, True, True]
        assert record.bet == 0 and record.payments == (0, 0, 0)
        assert {seat for seat, _ in record.actions} & {1, 2}, "the bots never moved"
        no_bot_timed_out(record, {1, 2})
    await unchanged_books(person, stack, before)

    # Back to waiting: the bots ready themselves, but no deal until the person is ready.
    await socket.wait_for(
        lambda: (
            (t := socket.state(table.table_id).table) is not None
            and t.status == "waiting"
            and all(s is not None and s.ready for s in t.seats[1:])
        ),
        BOTS_READY_SECONDS,
    )
    assert (await person.get_table(table.table_id)).status == "waiting"
    # The table is its host's: when they leave between hands, it ends (and the bots go).
    left = await person.leave(table.table_id)
    assert left.status == "ended"
    await socket.close()


async def test_mahjong_practice_bots_claim_inside_the_call_window(
    stack: Stack, person: KalaroClient
) -> None:
    before = (await person.balance()).balance
    # A short call window: the bots' answers must land well inside it.
    created = await person.create_practice("mahjong", options={"call_seconds": 3})
    table = created.table
    assert_practice_table(table, person, 4)
    async with person.table_socket() as socket:
        await socket.subscribe(table.table_id)
        results = await play(
            person, socket, table.table_id, "mahjong", policy_for("mahjong", "smart"), timeout=60
        )
    result = results[0]
    assert result.payments == (0, 0, 0, 0)
    record = await person.hand_record(table.table_id, result.hand_id)
    bots = {1, 2, 3}
    answers = [(seat, a["type"]) for seat, a in record.actions if a["type"] in ("claim", "pass")]
    assert {seat for seat, _ in answers} & bots, "no bot ever answered a call window"
    no_bot_timed_out(record, bots)
    await unchanged_books(person, stack, before)
    await person.cancel_table(table.table_id)


async def test_bots_answer_fight_or_fold_inside_the_window(
    stack: Stack, person: KalaroClient
) -> None:
    created = await person.create_practice("tongits", options={"fight_seconds": 4})
    table_id = created.table.table_id
    answered = None
    async with person.table_socket() as socket:
        await socket.subscribe(table_id)
        for hand in range(1, 9):  # calling needs an exposed meld: not every hand gets one
            results = await play(person, socket, table_id, "tongits", CallsDraw(), hands=hand)
            record = await person.hand_record(table_id, results[-1].hand_id)
            no_bot_timed_out(record, {1, 2})
            call = record.result.get("draw_call")
            if call is None:
                continue
            assert call["timed_out"] == [False, False, False], call
            bot_answers = [call["answers"][s] for s in (1, 2) if s != call["caller"]]
            if any(a in ("fight", "fold") for a in bot_answers):
                answered = call
                break
    assert answered is not None, "no Draw call was answered by a bot in 8 hands"
    await person.cancel_table(table_id)


async def test_host_seats_bots_at_a_zero_bet_table_but_never_at_a_bet_table(
    stack: Stack, person: KalaroClient, unique: str
) -> None:
    host_request = await person.request_host("bots please")
    async with KalaroClient(stack.base_url) as admin:
        await admin.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)
        await admin.decide(host_request.approval_id, True)
    await person.refresh()  # the new role is in the next access token
    assert "host" in person.user.roles

    bet_table = (await person.create_table("tongits", 10)).table
    with pytest.raises(ApiError) as refused:
        await person.add_bot(bet_table.table_id)
    assert (refused.value.status, refused.value.code) == (403, "forbidden")
    assert (await person.get_table(bet_table.table_id)).seats == (None, None, None)
    await person.cancel_table(bet_table.table_id)

    table = (await person.create_table("tongits", 0)).table
    await person.sit(table.table_id, seat=0)
    first = await person.add_bot(table.table_id)
    second = await person.add_bot(table.table_id, seat=2)
    seats = second.seats
    assert first.seats[1] is not None and first.seats[1].is_bot
    assert seats[2] is not None and seats[2].is_bot and seats[1] is not None
    assert seats[1].user_id != seats[2].user_id
    with pytest.raises(ApiError) as full:
        await person.add_bot(table.table_id)
    assert full.value.code == "conflict"

    async with person.table_socket() as socket:
        await socket.subscribe(table.table_id)
        await person.ready(table.table_id)
        # Not a practice table: the bots ready themselves, the host deals.
        await socket.wait_for(
            lambda: (
                (t := socket.state(table.table_id).table) is not None
                and all(s is not None and s.ready for s in t.seats)
            ),
            BOTS_READY_SECONDS,
        )
        await person.deal(table.table_id)
        results = await play(
            person, socket, table.table_id, "tongits", policy_for("tongits", "smart")
        )
    record = await person.hand_record(table.table_id, results[0].hand_id)
    assert {seat for seat, _ in record.actions} & {1, 2}
    no_bot_timed_out(record, {1, 2})
    await person.cancel_table(table.table_id)


async def test_bots_play_on_after_the_bots_service_restarts(
    stack: Stack, person: KalaroClient
) -> None:
    """A redeploy: the bots service stops (its bots stay seated) and a new process
    resumes every bot it finds left behind, from Redis, through the gateway again."""
    table = (await person.create_practice("tongits")).table
    bots_spec = next(spec for spec in SERVICES if spec.name == "bots")
    await asyncio.to_thread(stack.stop, "bots")
    stack.start(bots_spec)
    async with person.table_socket() as socket:
        await socket.subscribe(table.table_id)
        policy = policy_for("tongits", "smart")
        results = await play(person, socket, table.table_id, "tongits", policy, timeout=60)
    record = await person.hand_record(table.table_id, results[0].hand_id)
    assert {seat for seat, _ in record.actions} & {1, 2}, "the resumed bots never moved"
    no_bot_timed_out(record, {1, 2})
    await person.cancel_table(table.table_id)

"""What a seat puts at stake, and whether a player's credits cover all of it (pure).

One balance must cover every table a player sits at with a bet: each deal holds the
table's maximum loss, so a player seated at two tables with credits for one would make
every deal at the other fail. :func:`seat_hold` is the one place that says what a seat
commits (the Sit check and the deal's holds both use it); :func:`stake_commitment`
decides whether a remembered stake still counts, and :func:`cover` whether the credits
cover them all plus a new seat.
"""

from __future__ import annotations

import msgspec

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import TableInfo
from kalaro.proto.wallet import Balance
from services.lobby.records import CLOSED, IN_HAND

#: A stake reserved by a Sit still in flight counts this long without its seat (the
#: Sit asks the wallet, then writes the table: seconds at most); a reservation older
#: than this whose seat never came is a Sit that died, and is forgotten.
PENDING_STAKE_SECONDS = 30.0


class Stake(msgspec.Struct, frozen=True, array_like=True):
    """What the lobby remembers of one table a player sat down at (or is sitting down at)
    with a bet. The table's record stays the truth: a stake whose seat is gone is
    dropped when next read."""

    token: str  # the Sit that reserved it, so only that Sit releases it
    at: float  # epoch seconds it was reserved
    seated: bool = False  # the Sit succeeded (before that: a Sit in flight)


class Commitment(msgspec.Struct, frozen=True, kw_only=True):
    """Credits one table may take from a player in a hand there."""

    table_id: str
    game: str
    host_name: str
    bet: int
    amount: int
    in_hand: bool  # a hand is being dealt or played there: its hold may already be placed
    pending: bool = False  # a Sit there is still in flight


def seat_hold(info: TableInfo) -> int:
    """The credits a seat at this table commits: its maximum loss when it plays for
    credits; a zero-bet (or practice) table commits nothing."""
    if info.bet <= 0 or info.practice:
        return 0
    return info.max_loss


def commitment_of(info: TableInfo, *, pending: bool) -> Commitment | None:
    """What a seat at this table commits (None: nothing, a zero-bet table)."""
    amount = seat_hold(info)
    if amount <= 0:
        return None
    return Commitment(
        table_id=info.table_id,
        game=info.game,
        host_name=info.host_name,
        bet=info.bet,
        amount=amount,
        in_hand=info.status in IN_HAND,
        pending=pending,
    )


def stake_commitment(
    user_id: str, info: TableInfo | None, stake: Stake, now: float
) -> Commitment | None:
    """What a remembered stake commits now, or None when it no longer counts (the table
    closed or is gone, the player left or was removed, or a Sit there died)."""
    if info is None or info.status in CLOSED:
        return None
    seated = any(s is not None and s.user_id == user_id for s in info.seats)
    if not seated and (stake.seated or now - stake.at >= PENDING_STAKE_SECONDS):
        return None
    return commitment_of(info, pending=not seated)


def required(commitments: list[Commitment], held: int) -> int:
    """Credits needed for every commitment at once. A table in a hand may already hold
    its amount (then it is inside ``held``, which also has any hold of a hand not yet
    settled elsewhere), so in-hand tables count as the larger of the two."""
    in_hand = sum(c.amount for c in commitments if c.in_hand)
    between = sum(c.amount for c in commitments if not c.in_hand)
    return max(held, in_hand) + between


def _describe(c: Commitment) -> str:
    doing = "sitting down now" if c.pending else "seated"
    return f"{c.game} table {c.table_id} (host {c.host_name}, {doing}, {c.amount} at stake)"


def cover(new: Commitment, others: list[Commitment], balance: Balance) -> ServiceError | None:
    """Why the player cannot sit at ``new`` as well as at ``others``, or None if their
    balance covers every table's maximum loss at once."""
    need = required([*others, new], balance.held)
    if balance.balance >= need:
        return None
    if not others:
        return ServiceError(
            codes.INSUFFICIENT_FUNDS,
            f"you need {new.amount} credits available to sit here "
            f"({new.amount // max(new.bet, 1)}x the bet of {new.bet}); "
            f"you have {balance.available}",
        )
    tables = "; ".join(_describe(c) for c in others)
    return ServiceError(
        codes.COMMITTED_ELSEWHERE,
        f"your credits cannot cover this table too: you are at {tables}. Sitting here "
        f"({new.amount} at stake) would need {need} credits in all and you have "
        f"{balance.balance}. Leave one of those tables first, or get more credits.",
    )

"""What one table's hand is, as the engine keeps it (the :class:`Slot`), and the record
a decided hand leaves (:func:`hand_record`). Pure: the Redis layout is
:mod:`services.engine.slots`, the moves :mod:`services.engine.step`.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from kalaro.games.registry import rules_for
from kalaro.proto.engine import HandRecord, Player

Status = Literal["playing", "finished", "cancelled"]


class Slot(msgspec.Struct, kw_only=True):
    """One table's current (or last) hand. Internal: never sent to clients."""

    table_id: str
    hand_id: str
    game: str
    options: dict[str, Any] = {}  # the full options (ruleset + every house rule)
    bet: int = 0
    players: tuple[Player, ...] = ()
    dealer: int | None = None  # as StartHand asked (None: drawn from the seed)
    seed_commitment: str = ""
    server_seed: str = ""
    entropy: tuple[str, ...] = ()
    state: bytes = b""  # msgpack of the game's State; empty for a cancel tombstone
    actions: tuple[tuple[int, bytes], ...] = ()  # (seat, action JSON), timeouts included
    initial_hands: tuple[Any, ...] = ()
    # The table's flags as StartHand gave them, for the hand's record (defaults: a slot
    # written before they existed still decodes).
    private: bool = False
    ranked: bool = False
    status: Status = "playing"
    outcome_published: bool = False
    deadline_ms: int | None = None  # when the pending timer fires (epoch ms)
    timer_window: str = ""  # which timer window deadline_ms belongs to


def hand_record(slot: Slot) -> HandRecord:
    """Everything needed to re-derive and replay a finished hand (``kalaro verify``), or
    a voided one: a hand cancelled after its deal, its actions those played until then,
    no result and nobody paid. A cancel tombstone (never dealt) has no record."""
    if slot.status == "playing" or not slot.state:
        raise ValueError(f"hand {slot.hand_id} has no record: it is {slot.status}, not dealt")
    voided = slot.status == "cancelled"
    result: Any = None
    payments = (0,) * len(slot.players)
    if not voided:
        rules = rules_for(slot.game)
        decoded = rules.result(msgspec.msgpack.decode(slot.state, type=rules.state_type))
        result = msgspec.to_builtins(decoded)
        payments = tuple(units * slot.bet for units in decoded.payments)
    return HandRecord(
        game=slot.game,
        table_id=slot.table_id,
        hand_id=slot.hand_id,
        options=slot.options,
        bet=slot.bet,
        players=slot.players,
        dealer=slot.dealer,
        seed_commitment=slot.seed_commitment,
        server_seed=slot.server_seed,
        entropy=slot.entropy,
        actions=tuple((seat, msgspec.json.decode(action)) for seat, action in slot.actions),
        initial_hands=slot.initial_hands,
        result=result,
        payments=payments,
        practice=slot.bet == 0,
        private=slot.private,
        ranked=slot.ranked,
        voided=voided,
    )


__all__ = ["Slot", "Status", "hand_record"]

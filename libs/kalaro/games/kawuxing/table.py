"""Ka Wu Xing's facts for the shared tile flow (:mod:`kalaro.games.tilegame`): claims, Structs."""

from __future__ import annotations

from kalaro.games.kawuxing.actions import CLAIM_PRIORITY, Claim, Pass, TimeOut
from kalaro.games.kawuxing.events import CallAnswered, ClaimsOffered, TileClaimed
from kalaro.games.kawuxing.state import SEATS, CallWindow, Outcome
from kalaro.games.tilegame.table import Table

TABLE = Table(
    game="Ka Wu Xing",
    seats=SEATS,
    kong="kong",
    win=Claim(kind="win"),
    priority=CLAIM_PRIORITY,
    several_winners=True,
    turn_fields={"replacement": False, "visible_kong": False},
    claim=Claim,
    call_window=CallWindow,
    outcome=Outcome,
    claims_offered=ClaimsOffered,
    call_answered=CallAnswered,
    tile_claimed=TileClaimed,
    time_out=TimeOut,
    answers=(Claim, Pass, TimeOut),
)

"""Mahjong's facts for the shared tile flow (:mod:`kalaro.games.tilegame`): claims, Structs."""

from __future__ import annotations

from kalaro.games.mahjong.actions import CLAIM_PRIORITY, Claim, Pass, TimeOut
from kalaro.games.mahjong.events import CallAnswered, ClaimsOffered, TileClaimed
from kalaro.games.mahjong.state import SEATS, CallWindow, Outcome
from kalaro.games.tilegame.table import Table

TABLE = Table(
    game="Mahjong",
    seats=SEATS,
    kong="kang",
    win=Claim(kind="mahjong"),
    priority=CLAIM_PRIORITY,
    several_winners=False,
    claim=Claim,
    call_window=CallWindow,
    outcome=Outcome,
    claims_offered=ClaimsOffered,
    call_answered=CallAnswered,
    tile_claimed=TileClaimed,
    time_out=TimeOut,
    answers=(Claim, Pass, TimeOut),
)

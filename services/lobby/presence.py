"""Presence rules: which seats are connected, reconnecting or offline (pure)."""

from __future__ import annotations

from msgspec.structs import replace

from kalaro.proto.lobby import Presence, SeatInfo, TableInfo
from services.lobby.records import CLOSED, GatewaySockets, TableRecord


def public(info: TableInfo) -> TableInfo:
    """``info`` without its version, to tell whether a write changed what people see."""
    return replace(info, version=0)


def derive(rec: TableRecord, now: float, *, grace: float, forget_after: float) -> TableRecord:
    """The record with every seat's presence derived from its gateways' reports (the
    same object when nothing changes).

    A gateway not heard from for ``forget_after`` seconds is forgotten; its players
    were last known connected when it last reported. A seated player with a socket on
    any live gateway is ``connected``; one whose last socket went less than ``grace``
    seconds ago is ``reconnecting``; anyone else ``offline``.
    """
    live = tuple(g for g in rec.gateways if now - g.heard < forget_after)
    last = dict(rec.last_connected)
    if len(live) != len(rec.gateways):
        for gone in (g for g in rec.gateways if g not in live):
            for user_id in gone.user_ids:
                last[user_id] = max(last.get(user_id, 0.0), gone.heard)
    connected = {u for g in live for u in g.user_ids}
    seated = {s.user_id for s in rec.info.seats if s is not None}
    recent = tuple(
        sorted(
            (u, at)
            for u, at in last.items()
            if u in seated and u not in connected and now - at < grace
        )
    )
    recent_users = {u for u, _ in recent}
    seats: list[SeatInfo | None] = []
    moved = False
    for seat in rec.info.seats:
        if seat is None:
            seats.append(None)
            continue
        presence: Presence = (
            "connected"
            if seat.user_id in connected
            else "reconnecting"
            if seat.user_id in recent_users
            else "offline"
        )
        if presence != seat.presence:
            moved = True
            seat = replace(seat, presence=presence)
        seats.append(seat)
    if not moved and live == rec.gateways and recent == rec.last_connected:
        return rec
    info = replace(rec.info, seats=tuple(seats)) if moved else rec.info
    return replace(rec, info=info, gateways=live, last_connected=recent)


def due(rec: TableRecord, *, grace: float, forget_after: float) -> float | None:
    """When the record's presence next changes by itself (a reconnecting seat goes
    offline, or a silent gateway is forgotten); None if it never will."""
    times = [g.heard + forget_after for g in rec.gateways]
    times.extend(at + grace for _, at in rec.last_connected)
    return min(times) if times else None


def note_gateway(
    rec: TableRecord, gateway_id: str, user_ids: tuple[str, ...], now: float
) -> TableRecord:
    """A gateway's report of all its seated sockets on the table (``user_ids`` sorted,
    unique); the same record when it changes nothing."""
    if rec.info.status in CLOSED:
        return rec
    old = next((g for g in rec.gateways if g.gateway_id == gateway_id), None)
    if old is None and not user_ids:
        return rec
    others = tuple(g for g in rec.gateways if g.gateway_id != gateway_id)
    mine = (
        (GatewaySockets(gateway_id=gateway_id, user_ids=user_ids, heard=now),) if user_ids else ()
    )
    last = dict(rec.last_connected)
    for user_id in old.user_ids if old is not None else ():
        if user_id not in user_ids:
            last[user_id] = now  # their socket here just went
    return replace(rec, gateways=others + mine, last_connected=tuple(sorted(last.items())))

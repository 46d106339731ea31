"""The engine's pure step: a hand and a move in; the next hand, its frames and whether
it ended out. No I/O and no clock of its own (``now_ms`` is an argument).

The worker (:mod:`services.engine.worker`) loads a table's slot, calls :meth:`Steps.step`
(or :meth:`Steps.deal`, :meth:`Steps.time_out`), writes the :class:`Stepped` slot by
compare-and-set, and only then publishes its frames; a move that is refused raises
before anything is built, so nothing changes. Each seat's frame is built from the
game's view for that seat and ``event_for`` that seat: it shows only what the seat may
know. The audience's frame is built on demand (:meth:`Steps.audience_frame`), only
while someone watches: building a view nobody reads costs a quarter of a move.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.games.base import derive_seed
from kalaro.games.registry import rules_for
from kalaro.proto import errors as codes
from kalaro.proto.engine import StartHand
from kalaro.proto.frames import TableFrames, encode_frames
from kalaro.proto.lobby import HandFinished
from kalaro.proto.wallet import Payment, SettleHand, VoidHand
from kalaro.proto.ws import HandResult, HandView
from services.engine.hand import Slot, hand_record

_EMPTY_EVENTS = msgspec.Raw(b"[]")

#: (seat, action JSON) of each action a step applied: what the slot's log gains.
Logged = tuple[tuple[int, bytes], ...]


class Stepped(msgspec.Struct, kw_only=True):
    """A hand after one step, before it is written.

    ``frames`` are each seat's encoded ``HandView`` (seat order), for this version only;
    :meth:`Steps.table_frames` carries them all in the one message a step publishes.
    """

    slot: Slot  # the new slot: state encoded, actions appended, status and timer set
    version: int  # its version once written (the loaded one + 1)
    state: Any  # the decoded new state (the worker keeps it to skip the next read)
    events: list[Any]  # every event of the step, unfiltered: never sent as they are
    logged: Logged  # the actions applied, to append to the stored log
    over: bool  # the hand ended: its outcome is due
    frames: list[tuple[int, bytes]]


def bad_request(message: str) -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, message)


def seat_of(slot: Slot, user_id: str) -> int | None:
    for seat, player in enumerate(slot.players):
        if player.user_id == user_id:
            return seat
    return None


def timer_window(timer: Any) -> str:
    """Which window a timer belongs to: moves and answers inside it do not restart its
    clock, but a change of its length does (a seat marked away is played at once; one
    back from away gets the whole clock again)."""
    return f"{timer.kind}:{getattr(timer, 'opened_at', '')}:{timer.seconds}"


class Steps:
    """One game's pure steps, with the encoders and decoders built once (the hot path
    only encodes and decodes)."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.rules = rules_for(game)
        self._json = msgspec.json.Encoder()
        self._state_encoder = msgspec.msgpack.Encoder()
        self._state_decoder = msgspec.msgpack.Decoder(self.rules.state_type)
        self._time_out_type = type(self.rules.time_out())

    def state_of(self, slot: Slot) -> Any:
        return self._state_decoder.decode(slot.state)

    def encode(self, value: Any) -> bytes:
        return self._json.encode(value)

    # --- the steps ------------------------------------------------------------------

    def deal(self, msg: StartHand) -> tuple[Slot, Any]:
        """A new hand's slot (its state not yet in it) and its dealt state; raises
        ``bad_request`` for a StartHand the game cannot deal."""
        rules = self.rules
        if len(msg.players) != rules.seats:
            raise bad_request(f"{self.game} is played by {rules.seats}, not {len(msg.players)}")
        if len({p.user_id for p in msg.players}) != len(msg.players):
            raise bad_request("a player cannot take two seats")
        if msg.bet < 0:
            raise bad_request("the bet cannot be negative")
        try:
            server_seed = bytes.fromhex(msg.server_seed)
        except ValueError:
            raise bad_request("the server seed must be hex") from None
        if not server_seed:
            raise bad_request("the server seed is empty")
        try:
            options = rules.options(msg.options)
            state = rules.new_hand(options, derive_seed(server_seed, msg.entropy), msg.dealer)
        except ValueError as exc:
            raise bad_request(str(exc)) from None
        fresh = Slot(
            table_id=msg.table_id,
            hand_id=msg.hand_id,
            game=self.game,
            options=rules.options_dict(options),
            bet=msg.bet,
            players=msg.players,
            dealer=msg.dealer,
            seed_commitment=hashlib.sha256(server_seed).hexdigest(),
            server_seed=msg.server_seed,
            entropy=msg.entropy,
            initial_hands=rules.dealt(state),
            private=msg.private,
            ranked=msg.ranked,
        )
        return fresh, state

    def step(
        self,
        slot: Slot,
        version: int,
        user_id: str,
        action: bytes,
        now_ms: int,
        state: Any = None,
    ) -> Stepped:
        """``user_id``'s move (action JSON) on the hand at ``version``. ``state``: the
        slot's state already decoded (None: decode it). Raises ``ServiceError`` for a
        move nobody may make here and :class:`~kalaro.games.base.IllegalAction` for one
        the rules refuse; the slot given is never changed."""
        if slot.status == "cancelled":
            raise ServiceError(codes.HAND_CANCELLED, "this hand was cancelled")
        seat = seat_of(slot, user_id)
        if seat is None:
            raise ServiceError(codes.FORBIDDEN, "you are not seated in this hand")
        try:
            decoded = self.rules.decode_action(action)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise bad_request(f"malformed action: {exc}") from None
        if isinstance(decoded, self._time_out_type):
            raise ServiceError(codes.FORBIDDEN, "time-outs are applied by the server")
        if state is None:
            state = self.state_of(slot)
        state, events = self.rules.apply(state, seat, decoded)
        logged = ((seat, self._json.encode(decoded)),)
        return self.advance(slot, version, state, events, logged, now_ms)

    def time_out(self, slot: Slot, version: int, now_ms: int) -> Stepped | None:
        """Time out every seat the slot's timer window still waits on, in one step;
        None when the window has nobody left to time out."""
        rules = self.rules
        state = self.state_of(slot)
        events: list[Any] = []
        logged: list[tuple[int, bytes]] = []
        time_out = rules.time_out()
        encoded = self._json.encode(time_out)
        # Re-read the timer after each time-out: a Mahjong window may close early (no
        # one left could beat a claim), and then nobody else is timed out.
        for _ in range(rules.seats):
            timer = rules.pending_timer(state)
            if timer is None or timer_window(timer) != slot.timer_window:
                break
            waiting = rules.to_act(state)
            seats = [s for s in timer.seats if s in waiting]
            if not seats:
                break
            state, new_events = rules.apply(state, seats[0], time_out)
            events.extend(new_events)
            logged.append((seats[0], encoded))
        if not logged:
            return None
        return self.advance(slot, version, state, events, tuple(logged), now_ms)

    def advance(
        self,
        slot: Slot,
        version: int,
        state: Any,
        events: list[Any],
        logged: Logged,
        now_ms: int,
    ) -> Stepped:
        """The slot holding ``state`` (reached by ``logged`` from ``slot``): its status,
        its timer (a window already open keeps its deadline), and each seat's frame."""
        rules = self.rules
        over = rules.is_over(state)
        deadline: int | None = None
        window = ""
        timer = None if over else rules.pending_timer(state)
        if timer is not None:
            window = timer_window(timer)
            same = slot.deadline_ms is not None and slot.timer_window == window
            deadline = slot.deadline_ms if same else now_ms + timer.seconds * 1000
        status: Literal["finished", "playing"] = "finished" if over else "playing"
        new = replace(
            slot,
            state=self._state_encoder.encode(state),
            actions=slot.actions + logged,
            status=status,
            deadline_ms=deadline,
            timer_window=window,
        )
        frames = [
            (seat, self._frame(new, version + 1, state, events, seat))
            for seat in range(len(new.players))
        ]
        return Stepped(
            slot=new,
            version=version + 1,
            state=state,
            events=events,
            logged=logged,
            over=over,
            frames=frames,
        )

    # --- what is sent ---------------------------------------------------------------

    def audience_frame(self, stepped: Stepped) -> bytes:
        """The audience's frame of a step (no hidden card, no seat's private event)."""
        return self._frame(stepped.slot, stepped.version, stepped.state, stepped.events, None)

    def table_frames(self, stepped: Stepped, watched: bool) -> bytes:
        """The one message a step publishes (:class:`TableFrames`, encoded): each seat's
        frame as built, and the audience's only when ``watched``."""
        return encode_frames(
            TableFrames(
                version=stepped.version,
                seats=tuple(frame for _, frame in stepped.frames),
                audience=self.audience_frame(stepped) if watched else None,
            )
        )

    def view(self, slot: Slot, version: int, seat: int | None) -> HandView:
        """A full view of the hand from ``seat`` (None: the audience), no events."""
        return HandView(
            table_id=slot.table_id,
            hand_id=slot.hand_id,
            version=version,
            seat=seat,
            view=msgspec.Raw(self._json.encode(self.rules.view(self.state_of(slot), seat))),
            events=_EMPTY_EVENTS,
            deadline_ms=slot.deadline_ms,
        )

    def _frame(
        self, slot: Slot, version: int, state: Any, events: list[Any], seat: int | None
    ) -> bytes:
        rules = self.rules
        encode = self._json.encode
        seen = [e for e in (rules.event_for(event, seat) for event in events) if e is not None]
        frame = HandView(
            table_id=slot.table_id,
            hand_id=slot.hand_id,
            version=version,
            seat=seat,
            view=msgspec.Raw(encode(rules.view(state, seat))),
            events=msgspec.Raw(encode(seen)) if seen else _EMPTY_EVENTS,
            deadline_ms=slot.deadline_ms,
        )
        return encode(frame)

    def outcome_messages(
        self, slot: Slot
    ) -> tuple[SettleHand | VoidHand | None, HandFinished | None, HandResult | None]:
        """What a decided hand sends: to the wallet (None: a zero-bet hand held nothing),
        to the lobby (finished hands), and to the table's sockets (finished hands)."""
        table_id, hand_id = slot.table_id, slot.hand_id
        if slot.status != "finished":
            return VoidHand(hand_id=hand_id, table_id=table_id), None, None
        record = hand_record(slot)
        settle = None
        if slot.bet > 0:  # a zero-bet (practice) hand placed no holds to settle
            payments = tuple(
                Payment(user_id=player.user_id, amount=credits)
                for player, credits in zip(slot.players, record.payments, strict=True)
            )
            settle = SettleHand(hand_id=hand_id, payments=payments, table_id=table_id)
        finished = HandFinished(
            table_id=table_id,
            hand_id=hand_id,
            next_dealer=record.result["next_dealer"],
            away_seats=self.rules.away_seats(self.state_of(slot)),
        )
        shown = HandResult(
            table_id=table_id,
            hand_id=hand_id,
            result=msgspec.Raw(self._json.encode(record.result)),
            payments=record.payments,
            players=tuple(p.user_id for p in slot.players),
            seed_commitment=slot.seed_commitment,
            server_seed=slot.server_seed,
            entropy=slot.entropy,
        )
        return settle, finished, shown

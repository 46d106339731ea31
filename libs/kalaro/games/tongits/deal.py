"""The Tongits deal, and what the worker asks of a hand: whose input it waits on, its clock."""

from __future__ import annotations

from kalaro.games.base import pick, shuffled
from kalaro.games.cards import DECK
from kalaro.games.tongits.options import Options
from kalaro.games.tongits.scoring import SEATS
from kalaro.games.tongits.state import Result, State, Timer
from kalaro.games.tongits.steps import pending_answers, sorted_hand

DEALER_CARDS = 13
PLAYER_CARDS = 12


def new_hand(options: Options, seed: bytes, dealer: int | None = None) -> State:
    """Deal a hand from ``seed``.

    The deck (:data:`~kalaro.games.cards.DECK` order) is shuffled with the seed; cards
    0..35 go one at a time to the dealer, the next seat, the seat after, and so on;
    card 36 is the dealer's 13th; cards 37..51 are the stock, card 37 on top. With no
    ``dealer`` given (the first hand at a table), the dealer is ``pick(seed, "dealer", 3)``.
    """
    if dealer is None:
        dealer = pick(seed, "dealer", 3)
    if dealer not in SEATS:
        raise ValueError(f"dealer must be a seat 0, 1 or 2, not {dealer!r}")
    deck = shuffled(DECK, seed)
    hands: list[list[str]] = [[], [], []]
    for i in range(3 * PLAYER_CARDS):
        hands[(dealer + i) % 3].append(deck[i])
    hands[dealer].append(deck[3 * PLAYER_CARDS])
    return State(
        options=options,
        dealer=dealer,
        turn=dealer,
        phase="play",  # the dealer's first turn has no draw
        hands=tuple(sorted_hand(hand) for hand in hands),
        stock=tuple(deck[3 * PLAYER_CARDS + 1 :]),
        discards=(),
    )


def is_over(state: State) -> bool:
    return state.phase == "over"


def result(state: State) -> Result | None:
    """The result once the hand is over, else ``None``."""
    return state.result


def to_act(state: State) -> list[int]:
    """The seats whose input the hand is waiting for."""
    if state.phase == "over":
        return []
    if state.phase == "answers":
        return pending_answers(state)
    return [state.turn]


def pending_timer(state: State) -> Timer | None:
    """The window the worker must time now, or ``None`` (hand over, or clock off).

    During a Draw call: the Fight/Fold window, opened by the call and not restarted by
    an answer; ``seats`` are the opponents still to answer. Otherwise the turn clock of
    the player to act, one window per turn (``opened_at`` is ``turn_no``) that melds
    and lay-offs do not restart. ``seconds`` is 0 when every seat waited on is away.
    When it runs out the worker applies ``TimeOut()`` for each seat in ``seats`` that
    has still not acted.
    """
    if state.phase == "over":
        return None
    if state.phase == "answers":
        seats = tuple(pending_answers(state))
        all_away = all(state.is_away(s) for s in seats)
        return Timer(
            kind="fight_or_fold",
            seats=seats,
            seconds=0 if all_away else state.options.fight_seconds,
            opened_at=state.turn_no,
        )
    seconds = state.options.turn_seconds
    if seconds is None:
        return None
    return Timer(
        kind="turn",
        seats=(state.turn,),
        seconds=0 if state.is_away(state.turn) else seconds,
        opened_at=state.turn_no,
    )


def away_seats(state: State) -> tuple[int, ...]:
    """The seats marked away right now (the lobby seats them out of the next deal)."""
    return tuple(s for s in SEATS if state.is_away(s))

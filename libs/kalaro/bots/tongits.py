"""The smart Tongits bot: keep deadwood low, open early, call and fight on good odds.

It reads only its seat's :class:`~kalaro.games.tongits.View` and thinks in deadwood:
``best_deadwood`` of the cards it would keep is what its hand is worth if every meld in
it were laid down, so each move is scored by what it leaves behind.

* **Start of a turn.** Call Draw when nobody could fight (every opponent burned: a sure
  win) or when its deadwood is low against what the opponents' hand sizes suggest.
  Otherwise take the discard when it makes a meld without breaking a better one (the
  meld is exposed at once: it opens the hand and leaves the hand smaller), else draw.
* **After drawing.** Go Tongits when it can; lay off (sapaw) cards that are deadwood;
  expose every meld that belongs to a best partition of the hand (in the ``kalaro``
  ruleset every card left in hand counts, and an exposed meld also keeps it from being
  burned); then discard the card whose loss costs least: lowest deadwood kept, plus a
  bonus for keeping near-melds (pairs, two-card runs) in proportion to the unseen cards
  that would complete them, minus a small risk that the next player takes it for a meld.
* **Draw called.** Always answers: fights when its deadwood beats what the caller's hand
  size suggests (a caller chose to call, so it is assumed to hold low cards), folds
  otherwise.

The estimates use only what the table shows: hand sizes, who is opened, exposed melds and
the discard pile (the cards nobody can be holding).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kalaro.games.cards import DECK, card_index, card_value, cards_value
from kalaro.games.tongits import (
    AnyAction,
    CallDraw,
    Discard,
    Draw,
    ExposeSecretSet,
    Fight,
    Fold,
    LayOff,
    Meld,
    TakeDiscard,
    View,
    best_deadwood,
)

__all__ = ["SmartTongits"]

_RANK_OF: dict[str, int] = {name: i % 13 for i, name in enumerate(DECK)}
_SUIT_OF: dict[str, int] = {name: i // 13 for i, name in enumerate(DECK)}
_CARD_AT: dict[tuple[int, int], str] = {(i // 13, i % 13): name for i, name in enumerate(DECK)}


def _without(hand: tuple[str, ...], cards: tuple[str, ...]) -> tuple[str, ...]:
    gone = set(cards)
    return tuple(c for c in hand if c not in gone)


def _neighbours(card: str) -> list[str]:
    """Cards that could share a meld with ``card``: its rank, and its suit within two."""
    rank, suit = _RANK_OF[card], _SUIT_OF[card]
    out = [_CARD_AT[(s, rank)] for s in range(4) if s != suit]
    out += [
        _CARD_AT[(suit, r)] for r in range(max(0, rank - 2), min(12, rank + 2) + 1) if r != rank
    ]
    return out


@dataclass(frozen=True)
class SmartTongits:
    """Deadwood-driven Tongits policy. The numbers are tuned by ``kalaro simulate``."""

    name: str = "smart"
    #: Call Draw only with at most this much deadwood (unless no one can fight) ...
    call_max: int = 30
    #: ... and below this share of the lowest deadwood guessed for an opened opponent.
    call_ratio: float = 0.8
    #: A caller is guessed to hold this share of an average hand of its size.
    caller_share: float = 1.0
    #: A player who has not called is guessed to hold this share of an average hand.
    player_share: float = 0.8
    #: In ``outside_melds`` deadwood only unmelded cards count: roughly this share (a
    #: random 10-card hand keeps about 0.87 of its value outside melds).
    unmelded_share: float = 0.9
    #: Points a discard candidate is worth per unseen card that would meld with the rest.
    out_value: float = 2.0
    #: Points of risk per unit of chance that the next player can take the discard.
    feed_cost: float = 4.0

    def choose(self, view: View, rng: random.Random) -> AnyAction | None:
        legal = view.legal
        if not legal or view.seat is None:
            return None
        if view.phase == "answers":
            return self._answer(view)
        if view.phase == "start":
            return self._start(view, legal)
        return self._play(view, legal)

    # -- what the table shows ---------------------------------------------------------

    def _deadwood(self, view: View, hand: tuple[str, ...]) -> int:
        """What ``hand`` would count now, under the table's deadwood option."""
        if view.options.deadwood == "hand":
            return cards_value(hand)
        return best_deadwood(hand)

    def _unseen(self, view: View) -> set[str]:
        """Cards this seat cannot see: the stock and the other hands (and secret sets)."""
        seen = set(view.hand) | set(view.discards)
        for meld in view.melds:
            seen.update(meld.cards)
        return set(DECK) - seen

    def _guess(self, view: View, seat: int, unseen: set[str], share: float) -> float:
        """A guess at ``seat``'s deadwood from its hand size and the unseen cards' values."""
        if not unseen:
            return 0.0
        mean = sum(card_value(c) for c in unseen) / len(unseen)
        if view.options.deadwood != "hand":
            share *= self.unmelded_share
        return view.hand_sizes[seat] * mean * share

    # -- start of a turn --------------------------------------------------------------

    def _start(self, view: View, legal: tuple[AnyAction, ...]) -> AnyAction:
        if CallDraw() in legal and self._should_call(view):
            return CallDraw()
        hand = view.hand
        takes = [a for a in legal if isinstance(a, TakeDiscard)]
        if takes:
            # The meld goes down at once, so what matters is what is left in hand.
            best = min(takes, key=lambda a: (best_deadwood(_without(hand, a.cards)), -len(a.cards)))
            # not yet opened, any meld is worth taking: it keeps the hand from burning
            worse = best_deadwood(_without(hand, best.cards)) > best_deadwood(hand)
            if not worse or not view.opened[view.seat or 0]:
                return best
        if Draw() in legal:
            return Draw()
        return takes[0] if takes else legal[0]

    def _should_call(self, view: View) -> bool:
        me = view.seat
        assert me is not None
        fighters = [s for s in range(3) if s != me and view.opened[s]]
        if not fighters:
            return True  # burned players cannot fight: the caller wins for sure
        mine = self._deadwood(view, view.hand)
        if mine > self.call_max:
            return False
        unseen = self._unseen(view)
        lowest = min(self._guess(view, s, unseen, self.player_share) for s in fighters)
        return mine < lowest * self.call_ratio

    # -- after drawing ----------------------------------------------------------------

    def _play(self, view: View, legal: tuple[AnyAction, ...]) -> AnyAction:
        hand = view.hand
        building = [a for a in legal if isinstance(a, Meld | ExposeSecretSet | LayOff)]
        for action in building:
            if len(action.cards) == len(hand):
                return action  # Tongits
        if len(hand) == 1:
            return Discard(hand[0])  # Tongits with the last discard
        base = best_deadwood(hand)
        best: AnyAction | None = None
        best_key: tuple[int, int, int] | None = None
        for action in building:
            rest = _without(hand, action.cards)
            kept = best_deadwood(rest)
            if kept > base:
                continue  # it would break a better meld
            # least deadwood left, then most cards out; a secret set pays extra in table B
            key = (kept, len(rest), 0 if isinstance(action, ExposeSecretSet) else 1)
            if best_key is None or key < best_key:
                best, best_key = action, key
        if best is not None:
            return best
        return self._discard(view, legal)

    def _discard(self, view: View, legal: tuple[AnyAction, ...]) -> AnyAction:
        hand = view.hand
        candidates = [a for a in legal if isinstance(a, Discard)]
        if not candidates:
            return legal[0]
        kept = {a.card: best_deadwood(_without(hand, (a.card,))) for a in candidates}
        floor = min(kept.values())
        # Breaking a meld costs far more than any near-meld is worth: only look closer
        # at the cards whose loss keeps the deadwood near its best.
        shortlist = [a for a in candidates if kept[a.card] <= floor + 10]
        if len(shortlist) == 1:
            return shortlist[0]
        unseen = self._unseen(view)
        next_size = view.hand_sizes[((view.seat or 0) + 1) % 3]
        share = next_size / len(unseen) if unseen else 0.0

        def cost(action: Discard) -> tuple[float, int, int]:
            card = action.card
            rest = _without(hand, (card,))
            score = kept[card] - self.out_value * self._outs(rest, kept[card], unseen)
            score += self.feed_cost * self._feed_chance(card, unseen, share)
            return (score, -card_value(card), card_index(card))

        return min(shortlist, key=cost)

    @staticmethod
    def _outs(rest: tuple[str, ...], dead: int, unseen: set[str]) -> int:
        """Unseen cards that would join a meld in ``rest`` (lower its deadwood if drawn)."""
        near: set[str] = set()
        for card in rest:
            near.update(_neighbours(card))
        near &= unseen
        return sum(1 for u in near if best_deadwood((*rest, u)) < dead + card_value(u))

    @staticmethod
    def _feed_chance(card: str, unseen: set[str], share: float) -> float:
        """Rough chance that the next player holds two cards making a meld with ``card``.

        Each unseen card is in that hand with chance ``share``; a pair of them that makes
        a set or run with ``card`` is there with about ``share ** 2``.
        """
        rank, suit = _RANK_OF[card], _SUIT_OF[card]
        mates = sum(1 for s in range(4) if s != suit and _CARD_AT[(s, rank)] in unseen)
        pairs = mates * (mates - 1) // 2
        row = [
            0 <= r <= 12 and _CARD_AT[(suit, r)] in unseen for r in range(rank - 2, rank + 3)
        ]  # ranks rank-2 .. rank+2, the card itself in the middle
        pairs += (row[0] and row[1]) + (row[1] and row[3]) + (row[3] and row[4])
        return min(1.0, pairs * share * share)

    # -- a Draw call ------------------------------------------------------------------

    def _answer(self, view: View) -> AnyAction:
        call = view.draw_call
        assert call is not None and view.seat is not None
        mine = self._deadwood(view, view.hand)
        guess = self._guess(view, call.caller, self._unseen(view), self.caller_share)
        # a tie goes to the caller under ``draw_tie="caller"``, to the fighter otherwise
        wins_tie = view.options.draw_tie != "caller"
        fight = mine < guess or (wins_tie and mine <= guess)
        return Fight() if fight and Fight() in view.legal else Fold()

"""Fair-play signals (services.ranked.fairplay): a planted colluding pair is found among
random play, an honest pair is not; shared addresses and devices are listed."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from services.ranked.fairplay import (
    AccountAccess,
    PlayedHand,
    all_findings,
    one_way_credit,
    played_hand,
    shared_access,
    sit_together,
)
from tests.unit.hand_records import play

COLLUDERS = ("u-carol", "u-dave")


def _random_play(
    seed: int, *, tables: int = 1500, players: int = 60, plant: bool = True
) -> list[PlayedHand]:
    """Tables of three drawn at random from a pool, 1–3 hands each, the winner taking
    the stake from the other two. With ``plant``, the colluders are seated together at
    40 extra tables where dave always feeds carol."""
    rng = random.Random(seed)
    pool = [f"u{i}" for i in range(players - 2)] + list(COLLUDERS)
    hands: list[PlayedHand] = []
    for t in range(tables):
        seated = rng.sample(pool, 3)
        planted = plant and t % (tables // 40) == 0
        if planted:
            seated = [*COLLUDERS, rng.choice(pool[:-2])]
        for h in range(rng.randint(1, 3)):
            winner = 0 if planted else rng.randrange(3)
            payments = [-10, -10, -10]
            payments[winner] = 20
            if planted:  # dave pays carol; the stranger loses little
                payments = [30, -25, -5]
            hands.append(
                PlayedHand(
                    hand_id=f"h{t}-{h}",
                    table_id=f"t{t}",
                    game="tongits",
                    players=tuple(seated),
                    payments=tuple(payments),
                )
            )
    return hands


def test_a_planted_pair_is_found_and_nobody_else() -> None:
    for seed in range(3):
        hands = _random_play(seed)
        together = sit_together(hands)
        assert [f.accounts for f in together] == [COLLUDERS]
        assert together[0].score > 4 and len(together[0].hand_ids) >= 40
        credit = one_way_credit(hands)
        assert [f.accounts for f in credit] == [COLLUDERS]
        assert credit[0].detail.startswith("u-dave -> u-carol")
        planted = {h.hand_id for h in hands if set(COLLUDERS) <= set(h.players)}
        assert set(credit[0].hand_ids) == planted


def test_honest_random_play_raises_nothing() -> None:
    for seed in range(3):
        hands = _random_play(seed, plant=False)
        assert sit_together(hands) == [] and one_way_credit(hands) == []


def test_a_pair_of_regulars_who_simply_play_a_lot_is_not_flagged() -> None:
    # Two heavy players meet often because they play often, not because they choose to.
    rng = random.Random(9)
    pool = [f"u{i}" for i in range(40)]
    hands = []
    for t in range(1200):
        seated = [*rng.sample(pool, 2), "heavy-a"] if t % 2 else rng.sample(pool, 3)
        if t % 3 == 0:
            seated[rng.randrange(3)] = "heavy-b"
            seated = seated if len(set(seated)) == 3 else rng.sample(pool, 3)
        hands.append(PlayedHand(hand_id=f"h{t}", table_id=f"t{t}", game="tongits",
                                players=tuple(seated), payments=(10, -5, -5)))  # fmt: skip
    assert not [f for f in sit_together(hands) if "heavy-a" in f.accounts]


def test_games_are_counted_apart() -> None:
    hands = _random_play(1)
    mahjong = [
        PlayedHand(hand_id=f"m{i}", table_id=f"m{i}", game="mahjong",
                   players=("x", "y", "z", "w"), payments=(0, 0, 0, 0))
        for i in range(3)
    ]  # fmt: skip
    # Three mahjong tables all of the same four: common in a tiny game, but below min.
    assert all(f.accounts == COLLUDERS for f in sit_together(hands + mahjong))


def test_shared_addresses_and_devices_are_listed_with_the_hands() -> None:
    access = {
        "a": AccountAccess(addresses=frozenset({"10.0.0.1"}), devices=frozenset({"d1"})),
        "b": AccountAccess(addresses=frozenset({"10.0.0.1"}), devices=frozenset({"d2"})),
        "c": AccountAccess(addresses=frozenset({"10.0.0.3"}), devices=frozenset({"d2"})),
        "e": AccountAccess(addresses=frozenset({"10.0.0.4"}), devices=frozenset({"d4"})),
    }
    hands = [
        PlayedHand(hand_id="h1", table_id="t1", game="tongits", players=("a", "b", "e"),
                   payments=(1, 0, -1)),
        PlayedHand(hand_id="h2", table_id="t2", game="tongits", players=("a", "c", "e"),
                   payments=(1, 0, -1)),
        PlayedHand(hand_id="h3", table_id="t3", game="tongits", players=("b", "c", "e"),
                   payments=(1, 0, -1)),
    ]  # fmt: skip
    found = {(f.kind, f.accounts): f.hand_ids for f in shared_access(access, hands)}
    assert found == {
        ("shared_address", ("a", "b")): ("h1",),
        ("shared_device", ("b", "c")): ("h3",),
    }
    kinds = [f.kind for f in all_findings(hands, access)]
    assert kinds == ["shared_address", "shared_device"]


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9),
                          st.integers(0, 2)), max_size=80))  # fmt: skip
def test_findings_are_well_formed(rows: list[tuple[int, int, int, int]]) -> None:
    hands = [
        PlayedHand(hand_id=f"h{i}", table_id=f"t{i // 2}", game="tongits",
                   players=(f"u{a}", f"u{b}", f"u{c}"),
                   payments=tuple(20 if s == w else -10 for s in range(3)))
        for i, (a, b, c, w) in enumerate(rows)
    ]  # fmt: skip
    ids = {h.hand_id for h in hands}
    for finding in [*sit_together(hands, min_tables=2), *one_way_credit(hands, min_hands=2)]:
        assert finding.accounts == tuple(sorted(finding.accounts))
        assert finding.hand_ids and set(finding.hand_ids) <= ids
        assert finding.score > 0


def test_a_hand_record_reads_as_a_played_hand() -> None:
    record = play("mahjong", random.Random(3))
    hand = played_hand(record)
    assert hand.players == ("u0", "u1", "u2", "u3") and hand.payments == record.payments
    assert (hand.hand_id, hand.table_id, hand.game) == (record.hand_id, "t1", "mahjong")

"""The lobby's table records (:class:`services.lobby.store.Tables`): a new table gets an
id and version 1; each change is one compare-and-set at the next version, a change that
changes nothing writes nothing, a refused one writes nothing either; the listing is
newest first and loses closed and unlisted tables."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import TableStatus
from services.lobby.records import TableRecord
from services.lobby.store import Tables
from tests.unit.lobby.lobby_helpers import ANA, record, seated

__all__ = [
    "test_a_change_is_one_new_version_and_nothing_is_no_write",
    "test_a_new_table_gets_an_id_and_version_one",
    "test_the_listing_is_newest_first_without_closed_or_unlisted_tables",
]


def _status(status: TableStatus) -> Callable[[TableRecord], TableRecord]:
    def change(rec: TableRecord) -> TableRecord:
        return replace(rec, info=replace(rec.info, status=status))

    return change


async def test_a_new_table_gets_an_id_and_version_one(tables: Tables) -> None:
    new = await tables.insert(record(), listed_at=None)
    assert new.info.table_id != "t1"
    version, loaded = await tables.load(new.info.table_id)
    assert version == 1
    assert loaded.info.version == 1
    assert replace(loaded, info=replace(loaded.info, version=0)) == replace(
        new, info=replace(new.info, version=0)
    )
    raw_version, raw = await tables.get(new.info.table_id)
    assert (raw_version, raw is not None) == (1, True)
    with pytest.raises(ServiceError) as missing:
        await tables.load("no-such-table")
    assert missing.value.code == codes.NOT_FOUND
    assert await tables.get("no-such-table") == (0, None)


async def test_a_change_is_one_new_version_and_nothing_is_no_write(tables: Tables) -> None:
    table_id = (await tables.insert(record(), listed_at=None)).info.table_id
    written = await tables.update(table_id, lambda rec: seated(rec, ANA))
    assert written.wrote
    assert written.after.info.version == 2
    assert written.after.info.seats[0] is not None
    assert (await tables.load(table_id))[1] == written.after

    same = await tables.update(table_id, lambda rec: rec)
    assert not same.wrote
    assert (await tables.load(table_id))[0] == 2

    def refuse(rec: TableRecord) -> TableRecord:
        raise ServiceError(codes.CONFLICT, "no")

    with pytest.raises(ServiceError):
        await tables.update(table_id, refuse)
    assert (await tables.load(table_id))[0] == 2

    derived = await tables.update(
        table_id,
        _status("dealing"),
        derive=lambda rec: replace(rec, info=replace(rec.info, hand_no=rec.info.hand_no + 1)),
    )
    assert (derived.after.info.status, derived.after.info.hand_no) == ("dealing", 1)
    assert (await tables.load(table_id))[1] == derived.after


async def test_the_listing_is_newest_first_without_closed_or_unlisted_tables(
    tables: Tables,
) -> None:
    ids = [(await tables.insert(record(), listed_at=n)).info.table_id for n in (1.0, 3.0, 2.0)]
    hidden = (await tables.insert(record(), listed_at=None)).info.table_id
    listed = await tables.listed(0)
    assert [t for t, _ in listed] == [ids[1], ids[2], ids[0]]
    assert all(rec is not None and rec.info.table_id == t for t, rec in listed)
    await tables.update(ids[1], _status("ended"))
    await tables.unlist(ids[0])
    assert [t for t, _ in await tables.listed(0)] == [ids[2]]
    assert [t for t, _ in await tables.listed(1)] == []
    # Closed tables stay readable (a day in Redis); unknown ones read as None.
    found = await tables.load_many([ids[1], "no-such-table", hidden])
    assert [(t, rec is not None) for t, rec in found] == [
        (ids[1], True),
        ("no-such-table", False),
        (hidden, True),
    ]

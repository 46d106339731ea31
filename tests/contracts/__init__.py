"""Store contracts: one test body per store, run against the in-memory twin in the unit
tier and against the real SQL or Redis store in the integration tier.

Each module here holds plain ``test_*`` functions that take the store as a fixture
(``hands``, ``ledger``, ``accounts``, ``tables``); a unit module and an integration
module each import them (``from tests.contracts.<store> import *``) and define that
fixture, so pytest runs the same body twice, once per implementation.
"""

"""The bus contract: msgspec message types and subject names.

One module per subject family (``auth``, ``wallet``, ...); every subject is declared
in :mod:`kalaro.proto.subjects`. Internal decoders are tolerant of unknown fields so
services can be upgraded one at a time; the gateway is strict towards clients.
"""

"""The bus's typed errors; they live in :mod:`kalaro.errors` (no bus needed to raise one)."""

from kalaro.errors import RemoteError, ServiceError, unavailable

__all__ = ["RemoteError", "ServiceError", "unavailable"]

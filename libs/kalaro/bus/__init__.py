"""The bus: typed NATS request/reply services, JetStream helpers, Redis CAS store."""

from kalaro.bus.client import request
from kalaro.bus.errors import RemoteError, ServiceError
from kalaro.bus.service import Route, Service, route

__all__ = ["RemoteError", "Route", "Service", "ServiceError", "request", "route"]

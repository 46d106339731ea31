"""The lobby service: tables, seats, readiness, dealing and chat (subjects ``lobby.*``)."""

"""The gateway: HTTP and WebSocket front door, a thin translator onto NATS services."""

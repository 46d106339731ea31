"""The bots service: bot accounts that play at tables like people do, through the gateway."""

"""The auth service: accounts, passwords, tokens, Google sign-in and roles over NATS."""

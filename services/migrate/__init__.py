"""Schema migrations as a one-shot command (the Kubernetes migration Job)."""

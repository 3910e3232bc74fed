"""The ledger: events in deterministic order, hashed, streamed to disk."""

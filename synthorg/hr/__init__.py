"""Careers: reviews that score agents from the ledger (polars), policies that promote, demote,
fire, hire and reassign, and what departments decide at each review."""

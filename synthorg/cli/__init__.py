"""The `synthorg` command line."""

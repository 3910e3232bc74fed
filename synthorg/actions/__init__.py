"""Actions: calls with an id and a lifecycle, run by executors, delivered at fixed ticks."""

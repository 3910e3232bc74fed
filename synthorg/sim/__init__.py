"""Running a simulation: the driver that owns the clock, backends, results."""

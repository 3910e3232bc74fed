"""The organisation: its static directory, workload arrivals and department routing."""

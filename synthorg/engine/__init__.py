"""The simulation engine: agent groups stepping the loop, event buffers, task queues."""

"""The Ray layer: actors that host domain objects and pass messages."""

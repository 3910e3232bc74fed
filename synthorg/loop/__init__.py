"""The teleological loop: phases, strategy protocols and their deterministic implementation."""

"""LLM mode: agents that reason through an OpenAI-compatible model (config `llm`)."""

"""SecOps: every tool call is checked before it runs. Rule-engine fast path only, for now."""

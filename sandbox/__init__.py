"""Tool execution isolation (Docker + MCP): lands with its own issue."""

"""An external MCP server for tests, as a user would bring one: `sql_query` over a small
in-memory database. Each call is appended to the file named by RECORDS_LOG, so a test can
check what reached the server."""

from __future__ import annotations

import os
import sqlite3
import threading

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("records", log_level="WARNING")
db = sqlite3.connect(":memory:", check_same_thread=False)  # tools run in worker threads
lock = threading.Lock()
db.executescript("""
CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL, created_at TEXT);
INSERT INTO orders VALUES (1, 10.0, '2026-11-24'), (2, 25.5, '2026-11-25');
CREATE TABLE tickets (id INTEGER PRIMARY KEY, status TEXT);
""")


@server.tool()
def sql_query(query: str) -> str:
    """Run a query against the records database."""
    with lock, open(os.environ["RECORDS_LOG"], "a") as log:
        log.write(query.replace("\n", " ") + "\n")
        try:
            rows = db.execute(query).fetchall()
        except sqlite3.Error as exc:
            raise ToolError(f"query failed: {exc}") from None
    return repr(rows)


if __name__ == "__main__":
    server.run("stdio")

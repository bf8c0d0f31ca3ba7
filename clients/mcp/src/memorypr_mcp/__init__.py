"""memorypr-mcp: memorypr's agent API as MCP tools (see `server`)."""

from memorypr_mcp.server import build_server, client_from_env, main

__all__ = ["build_server", "client_from_env", "main"]

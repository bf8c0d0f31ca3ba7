"""PostgreSQL backend that waits briefly for a connection instead of failing at once."""

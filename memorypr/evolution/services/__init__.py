"""Evolution: feedback on facts, and the background jobs that propose forgetting and consolidation."""

"""The vector side of the fact store: embeddings and search text, behind a small interface."""

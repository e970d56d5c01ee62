"""static-rag indexer: sources → chunks → embeddings → an immutable, published generation."""

__version__ = "0.1.0"

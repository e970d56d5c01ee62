"""static-rag server: a read-only search API over the current published generation."""

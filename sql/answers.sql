-- Curated answers (source type "answers"), which a server keeps in memory: text, phrasings, threshold.
SELECT doc_id, text, metadata, tags FROM documents WHERE source_type = 'answers';

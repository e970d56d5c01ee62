-- The storage statistics of the documents' text column, one row per column segment (no text is read):
-- their total and longest string lengths bound what a rewrite must hold in memory.
SELECT stats FROM pragma_storage_info('documents') WHERE column_name = 'text' AND segment_type = 'VARCHAR';

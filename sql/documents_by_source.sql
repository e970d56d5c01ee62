-- Per source: its documents, and how many of them have no URL (their hits cannot link anywhere).
SELECT source, source_type, count(*) AS documents, count(*) FILTER (WHERE url IS NULL) AS without_url
FROM documents
GROUP BY source, source_type
ORDER BY source;

-- Per source: its documents, how many have no URL (their hits cannot link anywhere), and how many
-- link to a Notion page only the workspace's members can open (not published to the web).
SELECT source, source_type, count(*) AS documents, count(*) FILTER (WHERE url IS NULL) AS without_url,
       count(*) FILTER (WHERE url LIKE 'https://www.notion.so/%' OR url LIKE 'https://notion.so/%') AS members_only
FROM documents
GROUP BY source, source_type
ORDER BY source;

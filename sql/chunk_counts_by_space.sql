SELECT space_id, count(*) AS chunks, max(vector_id) + 1 AS max_vector_id FROM chunks GROUP BY space_id ORDER BY space_id;

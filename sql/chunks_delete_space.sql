-- Every chunk row of a space, or (`$keep`) of every space but those.
DELETE FROM chunks WHERE (space_id = $space_id) OR ($keep IS NOT NULL AND NOT list_contains($keep::VARCHAR[], space_id));

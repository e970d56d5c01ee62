-- Every chunk row of a space, from a copy of the previous generation's file.
DELETE FROM chunks WHERE space_id = $space_id;

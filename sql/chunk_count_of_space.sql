-- How many chunks a space has.
SELECT count(*) FROM chunks WHERE space_id = $space_id;

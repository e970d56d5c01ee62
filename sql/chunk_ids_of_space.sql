-- Vector id and document of every chunk of a space: what a run keeps is chosen by document.
SELECT vector_id, doc_id FROM chunks WHERE space_id = $space_id;

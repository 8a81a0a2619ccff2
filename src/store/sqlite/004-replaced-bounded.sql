-- Tether SQLite schema, version 4: a belief lists at most 10 replaced values (MAX_REPLACED in
-- src/memory/fold.ts), newest first. Before, the list grew with every change of a single fact and was
-- rewritten whole each time. Beliefs stored by earlier versions keep their 10 newest.
UPDATE beliefs
SET replaced = (
  SELECT json_group_array(json(value)) FROM (
    SELECT value FROM json_each(beliefs.replaced) ORDER BY key LIMIT 10
  )
)
WHERE json_array_length(replaced) > 10;

-- Tsumugi for Python: the indexes that serve only some rows hold only those rows.
-- Every projected change is an upsert whose SET list names every column, and SQLite rewrites each index
-- holding a SET column (or filtered on one) on every update. Most jobs have no concurrency_key and no
-- unique_key, and the stats lookup only reads SCHEDULED jobs, yet the 0010 versions of these three indexes
-- took an entry for every row. Partial indexes keep the same key order for the rows that matter and skip
-- the rest: an equality filter on a key implies it IS NOT NULL, so SQLite still picks them.

DROP INDEX job_concurrency_key_recent;
DROP INDEX job_unique_key_recent;
DROP INDEX job_state_due;

-- By concurrency_key (who holds or waits for a key), and its total: jobs with a key only.
CREATE INDEX job_concurrency_key_recent ON job(concurrency_key, updated_at, id) WHERE concurrency_key IS NOT NULL;

-- By unique_key (which job holds a dedup key), and its total: jobs with a key only.
CREATE INDEX job_unique_key_recent ON job(unique_key, updated_at, id) WHERE unique_key IS NOT NULL;

-- The oldest SCHEDULED job for /api/stats, SCHEDULED rows only: min(run_after) is one seek past the NULLs,
-- and min(created_at) of the rows projected before run_after existed is one seek into run_after IS NULL.
-- The planner prefers job_state_recent for `state = 'SCHEDULED'`, so the stats query names this index.
CREATE INDEX job_scheduled_due ON job(run_after, created_at) WHERE state = 'SCHEDULED';

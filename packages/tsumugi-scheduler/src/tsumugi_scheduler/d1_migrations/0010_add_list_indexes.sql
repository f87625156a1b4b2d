-- Tsumugi for Python: every common dashboard list is served by one index, count included.
-- Lists sort by updated_at DESC with id DESC as tie-breaker and page with LIMIT / OFFSET.
-- An index ending in (updated_at, id) yields rows already in that order, so a page reads only
-- offset + limit index entries and needs no temporary sort. The original's indexes stop at
-- updated_at and are strict prefixes of the new ones, so they are dropped rather than kept:
-- each index is one more write on every projected change.

DROP INDEX job_state;
DROP INDEX job_binding;
DROP INDEX job_created;
DROP INDEX job_unique_key;
DROP INDEX job_concurrency_key;

-- By state (the dashboard's state tabs), its total, and the sweep of old terminal rows.
CREATE INDEX job_state_recent ON job(state, updated_at, id);

-- By binding, and its total.
CREATE INDEX job_binding_recent ON job(binding, updated_at, id);

-- By concurrency_key (who holds or waits for a key), and its total.
CREATE INDEX job_concurrency_key_recent ON job(concurrency_key, updated_at, id);

-- By unique_key (which job holds a dedup key), and its total.
CREATE INDEX job_unique_key_recent ON job(unique_key, updated_at, id);

-- Newest first with no filter: the default view of the jobs tab.
CREATE INDEX job_recent ON job(updated_at, id);

-- The created_from / created_to range, the sort by creation time, and bulk selection
-- (created_at ASC, id ASC).
CREATE INDEX job_created_recent ON job(created_at, id);

-- The oldest SCHEDULED job for /api/stats: min(run_after) for one state is a single seek here, where
-- job_state_recent would read every waiting job. created_at is the fallback for rows projected before
-- run_after existed. (A partial index WHERE state = 'SCHEDULED' loses to job_state_recent in SQLite's
-- planner, so the state leads the key instead.)
CREATE INDEX job_state_due ON job(state, run_after, created_at);

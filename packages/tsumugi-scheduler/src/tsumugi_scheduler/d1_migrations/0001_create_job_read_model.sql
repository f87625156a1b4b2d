-- The D1 read model of jobs: one row per job, the latest snapshot the JobShard projected.
-- Lists, search and stats read from here; decisions never do (the shard is the source of truth).
-- seq is the shard's feed position of the applied snapshot, so stale or replayed snapshots lose.
CREATE TABLE job (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  binding TEXT NOT NULL,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  concurrency_key TEXT,
  unique_key TEXT,
  guarantee TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  dispatched_at INTEGER,
  payload TEXT NOT NULL,
  run_id TEXT,
  node_id TEXT
);

-- Lists filtered by state, newest change first, and the sweep of old terminal rows.
CREATE INDEX job_state ON job(state, updated_at);

-- Lists filtered by binding, newest change first.
CREATE INDEX job_binding ON job(binding, updated_at);

-- The created_from / created_to range filter and the sort by creation time.
CREATE INDEX job_created ON job(created_at);

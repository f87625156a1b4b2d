-- The D1 read model of flow runs and their nodes, projected from each Run Durable Object.
-- Both tables carry seq so stale or replayed snapshots never overwrite newer ones.
CREATE TABLE run (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  flow TEXT NOT NULL,
  state TEXT NOT NULL,
  input TEXT NOT NULL,
  node_total INTEGER NOT NULL,
  node_done INTEGER NOT NULL,
  node_failed INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Run lists filtered by state, newest change first.
CREATE INDEX run_state ON run(state, updated_at);

-- Run lists filtered by flow, newest change first.
CREATE INDEX run_flow ON run(flow, updated_at);

-- Sort and range by creation time.
CREATE INDEX run_created ON run(created_at);

-- The unfiltered run list: updated_at DESC, id DESC straight from the index.
CREATE INDEX run_updated ON run(updated_at, id);

CREATE TABLE run_node (
  run_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  binding TEXT NOT NULL,
  state TEXT NOT NULL,
  container INTEGER NOT NULL,
  parent TEXT,
  origin TEXT NOT NULL,
  after TEXT NOT NULL,
  job_id TEXT,
  result TEXT,
  error TEXT,
  position INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, node_id)
);

-- The run detail lists a run's nodes in definition / creation order.
CREATE INDEX run_node_run ON run_node(run_id, position);

-- Tsumugi for Python: columns of the shard's job row the original did not project.
-- All nullable because rows projected before this file lack them (they fill in on the next change).

-- W3C trace context given at enqueue, so a job can be tied to the request that made it.
ALTER TABLE job ADD COLUMN traceparent TEXT;

-- Expiry instant: a job not finished by then ends CANCELLED.
ALTER TABLE job ADD COLUMN expires_at INTEGER;

-- When a cancel of a dispatched job was requested (the job may still complete).
ALTER TABLE job ADD COLUMN cancel_requested_at INTEGER;

-- Error text of the last failed attempt, so FAILED rows explain themselves in lists and details.
ALTER TABLE job ADD COLUMN last_error TEXT;

-- Why the shard moved the job on its own (reaper, expiry, confirmed cancel), which no attempt row records.
ALTER TABLE job ADD COLUMN reason TEXT;

-- The shard index of the job's Durable Object (also inside the id), for per-shard views.
ALTER TABLE job ADD COLUMN shard INTEGER;

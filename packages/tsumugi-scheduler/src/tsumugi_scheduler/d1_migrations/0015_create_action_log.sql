-- Tsumugi for Python: who changed what through the REST API (ADR-0151). One row per accepted state change:
-- at (epoch ms), the actor's name (an email, a token's secret name) and role, the operation id, and its
-- target (a job id, a run id, a binding or a schedule name; NULL for a bulk action by filter). The job
-- detail reads a job's rows and its binding's; the cron sweep deletes rows past the read model's retention.
CREATE TABLE action_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  role TEXT,
  action TEXT NOT NULL,
  target TEXT
);
-- A job detail reads one target's newest rows: seek by target, newest seq first.
CREATE INDEX action_log_target ON action_log (target, seq);
-- The sweep deletes the oldest rows past the retention, a bounded number per run.
CREATE INDEX action_log_at ON action_log (at);

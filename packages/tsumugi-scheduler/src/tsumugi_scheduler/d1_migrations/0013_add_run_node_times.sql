-- Tsumugi for Python: when a run's node was scheduled (its job enqueued, its fan-out expanded or its child run
-- started) and when it finished (reached a terminal state), epoch ms; NULL until then, and for rows projected
-- before this migration. The run waterfall draws each node's bar between them (ADR-0070, ADR-0094).
ALTER TABLE run_node ADD COLUMN scheduled_at INTEGER;
ALTER TABLE run_node ADD COLUMN finished_at INTEGER;

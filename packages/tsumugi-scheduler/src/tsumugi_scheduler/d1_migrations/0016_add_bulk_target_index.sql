-- Tsumugi for Python: "retry all failed" of a binding reads its targets off an index (ADR-0160).
-- A bulk action by filter (POST /api/jobs/bulk-retry, /bulk-cancel) takes the 200 oldest jobs of a binding
-- in one of its states (created_at ASC, id ASC) and counts them up to 10,000. No index held binding, state
-- and created_at together: job_binding_recent yielded every job of the binding, each read from the table for
-- its state and then sorted, so one call cost time linear in the binding's jobs.
-- Partial: only the states a bulk action by filter may target (SCHEDULED for cancel, FAILED and STALLED for
-- retry) take an entry, so a job projected only while QUEUED, RUNNING, COMPLETED or CANCELLED writes nothing
-- here. SQLite uses a partial index only when the query repeats its WHERE term: readmodel/bulk.py does.
CREATE INDEX job_bulk_targets ON job(binding, state, created_at, id)
  WHERE state IN ('SCHEDULED', 'FAILED', 'STALLED');

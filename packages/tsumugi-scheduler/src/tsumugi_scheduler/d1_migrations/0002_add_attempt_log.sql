-- Up to 20 newest attempt rows (newest first) as JSON text, NULL when the job has none,
-- so the job detail needs no second query.
ALTER TABLE job ADD COLUMN attempts_log TEXT;

-- When a SCHEDULED job becomes eligible (delays and retry backoff); NULL for rows projected before this file.
ALTER TABLE job ADD COLUMN run_after INTEGER;

-- Exact-match search by unique_key, newest change first.
CREATE INDEX job_unique_key ON job(unique_key, updated_at);

-- Exact-match search by concurrency_key (which jobs hold or wait for a key), newest change first.
CREATE INDEX job_concurrency_key ON job(concurrency_key, updated_at);

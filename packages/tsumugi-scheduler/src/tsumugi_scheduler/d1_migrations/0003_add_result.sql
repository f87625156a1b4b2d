-- JSON text of the performer's return value (success only, capped by the shard).
ALTER TABLE job ADD COLUMN result TEXT;

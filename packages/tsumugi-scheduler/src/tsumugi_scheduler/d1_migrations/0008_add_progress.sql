-- The performer's reported progress (0..1) while the job runs; NULL otherwise.
ALTER TABLE job ADD COLUMN progress REAL;

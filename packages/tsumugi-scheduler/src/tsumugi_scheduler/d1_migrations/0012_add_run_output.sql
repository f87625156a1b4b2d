-- Tsumugi for Python: a run's output, the result of the node its flow declares as output (JSON text), set
-- when the run COMPLETED; NULL otherwise and for flows without an output node.
ALTER TABLE run ADD COLUMN output TEXT;

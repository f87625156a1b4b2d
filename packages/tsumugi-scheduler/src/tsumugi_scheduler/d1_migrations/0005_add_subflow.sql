-- Subflows: a node may start a child run, and a child run knows the parent node that started it.
ALTER TABLE run_node ADD COLUMN child_run_id TEXT;
ALTER TABLE run ADD COLUMN parent_run_id TEXT;
ALTER TABLE run ADD COLUMN parent_node_id TEXT;

-- Tsumugi for Python: the dashboard's open sign-in sessions (ADR-0121). A session cookie counts only while its
-- id is here: sign-out deletes the row, so a copied cookie stops working at once, on every isolate. Rows past
-- expires_at (epoch ms) are deleted at the next sign-in.
CREATE TABLE dashboard_session (
  id TEXT PRIMARY KEY NOT NULL,
  expires_at INTEGER NOT NULL
);

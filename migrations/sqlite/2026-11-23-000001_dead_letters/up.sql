-- Consume records the database refused even after sanitising, parked so that one bad record
-- never blocks the others and none is dropped silently: who and how much, the database's reason
-- and the record as JSON, for an administrator to look at. resolved_at is 0 while open. The
-- request id is looked up so that a batch written twice parks its record once.
CREATE TABLE dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at BIGINT NOT NULL,
    kind VARCHAR(32) NOT NULL,
    request_id VARCHAR(255) NULL,
    user_id BIGINT NOT NULL DEFAULT 0,
    token_id BIGINT NOT NULL DEFAULT 0,
    quota BIGINT NOT NULL DEFAULT 0,
    reason TEXT NOT NULL,
    payload TEXT NOT NULL,
    resolved_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX idx_dead_letters_created_at ON dead_letters (created_at);
CREATE INDEX idx_dead_letters_resolved_at ON dead_letters (resolved_at);
CREATE INDEX idx_dead_letters_request_id ON dead_letters (request_id);

-- Consume records the database refused even after sanitising, parked so that one bad record
-- never blocks the others and none is dropped silently: who and how much, the database's reason
-- and the record as JSON, for an administrator to look at. resolved_at is 0 while open. The
-- request id is looked up so that a batch written twice parks its record once.
CREATE TABLE dead_letters (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    kind VARCHAR(32) NOT NULL,
    request_id VARCHAR(255) NULL,
    user_id BIGINT NOT NULL DEFAULT 0,
    token_id BIGINT NOT NULL DEFAULT 0,
    quota BIGINT NOT NULL DEFAULT 0,
    reason TEXT NOT NULL,
    payload TEXT NOT NULL,
    resolved_at BIGINT NOT NULL DEFAULT 0,
    KEY idx_dead_letters_created_at (created_at),
    KEY idx_dead_letters_resolved_at (resolved_at),
    KEY idx_dead_letters_request_id (request_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

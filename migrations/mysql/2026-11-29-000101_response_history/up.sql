-- Conversations of bridged Responses API answers (docs/providers.md, "Responses API"): the
-- Responses items of each answered request (the conversation it continued, its input, its
-- output) under the response id, for a later request of the same user that names it as
-- previous_response_id. Not written for store: false; kept 30 days, then purged by the
-- maintenance job.
-- MEDIUMTEXT: a conversation may be larger than TEXT's 64 KiB (at most 16 MiB are kept).
CREATE TABLE response_history (
    response_id VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    model_name VARCHAR(255) NOT NULL,
    items MEDIUMTEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE INDEX idx_response_history_expires_at ON response_history (expires_at);

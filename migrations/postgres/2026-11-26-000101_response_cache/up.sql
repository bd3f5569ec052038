-- The response cache (docs/billing.md, "Response cache"): answers of non-streamed chat requests
-- kept for ChatCacheExpireMinute under a digest of user, group, model and request, when Redis is
-- not configured (with Redis they live there). logs.cache_hit marks a request answered from it;
-- statistics.cache_hits counts them per day for the dashboard's hit rate.
CREATE TABLE response_cache (
    cache_key VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    model_name VARCHAR(255) NOT NULL,
    body TEXT NOT NULL,
    usage_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX idx_response_cache_expires_at ON response_cache (expires_at);
CREATE INDEX idx_response_cache_created_at ON response_cache (created_at);
ALTER TABLE logs ADD COLUMN cache_hit BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE statistics ADD COLUMN cache_hits BIGINT NOT NULL DEFAULT 0;

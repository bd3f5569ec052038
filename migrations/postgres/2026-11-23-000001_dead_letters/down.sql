DROP INDEX IF EXISTS idx_dead_letters_request_id;
DROP INDEX IF EXISTS idx_dead_letters_resolved_at;
DROP INDEX IF EXISTS idx_dead_letters_created_at;
DROP TABLE IF EXISTS dead_letters;

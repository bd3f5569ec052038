ALTER TABLE statistics DROP COLUMN cache_hits;
ALTER TABLE logs DROP COLUMN cache_hit;
DROP TABLE response_cache;

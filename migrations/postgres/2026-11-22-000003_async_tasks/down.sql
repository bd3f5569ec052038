DROP INDEX IF EXISTS idx_tasks_channel_id_id;
DROP INDEX IF EXISTS idx_tasks_platform_id;
DROP INDEX IF EXISTS idx_tasks_user_id_platform_id;
CREATE INDEX idx_tasks_user_id ON tasks (user_id);
ALTER TABLE tasks DROP COLUMN refunded;
ALTER TABLE tasks DROP COLUMN image_url;
ALTER TABLE tasks DROP COLUMN prompt_en;
ALTER TABLE tasks DROP COLUMN prompt;
ALTER TABLE tasks DROP COLUMN token_id;

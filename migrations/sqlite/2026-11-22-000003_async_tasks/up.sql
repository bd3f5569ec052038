-- Async tasks (Midjourney, Suno): the key that submitted them, the prompt, the result image and
-- whether a failed task's charge went back. Indexes for the user's list, the admin filters and
-- the poller (unfinished tasks by status).
ALTER TABLE tasks ADD COLUMN token_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN prompt_en TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN image_url TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN refunded BOOLEAN NOT NULL DEFAULT FALSE;
DROP INDEX IF EXISTS idx_tasks_user_id;
CREATE INDEX idx_tasks_user_id_platform_id ON tasks (user_id, platform, id);
CREATE INDEX idx_tasks_platform_id ON tasks (platform, id);
CREATE INDEX idx_tasks_channel_id_id ON tasks (channel_id, id);

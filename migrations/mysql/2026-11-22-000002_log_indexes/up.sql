-- Log screen filters that had no index: key name and username (admin), and a user's logs of
-- one type (the user's consume logs and stats).
CREATE INDEX idx_logs_token_name_created_at ON logs (token_name, created_at);
CREATE INDEX idx_logs_username_created_at ON logs (username, created_at);
CREATE INDEX idx_logs_user_id_type_created_at ON logs (user_id, `type`, created_at);

DROP INDEX idx_logs_user_id_type_created_at ON logs;
DROP INDEX idx_logs_username_created_at ON logs;
DROP INDEX idx_logs_token_name_created_at ON logs;

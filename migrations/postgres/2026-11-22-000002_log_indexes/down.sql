DROP INDEX IF EXISTS idx_logs_user_id_type_created_at;
DROP INDEX IF EXISTS idx_logs_username_created_at;
DROP INDEX IF EXISTS idx_logs_token_name_created_at;

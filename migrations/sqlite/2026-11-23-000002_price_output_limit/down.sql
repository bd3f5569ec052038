ALTER TABLE prices DROP COLUMN max_output_tokens;

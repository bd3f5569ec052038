-- The model's output limit in tokens (0: unknown). The relay reserves at most this many output
-- tokens for a request that sets no max_tokens, and never lets a request run past what its
-- reservation covers (docs/billing.md).
ALTER TABLE prices ADD COLUMN max_output_tokens BIGINT NOT NULL DEFAULT 0;

-- Whether root last set the channel's destination (base URL, proxy, Vertex AI token_uri).
-- Destinations set by anyone else are reached through the outbound URL policy's public-only
-- resolver unless AllowPrivateOutbound is on (docs/security.md). Existing channels keep
-- working as before.
ALTER TABLE channels ADD COLUMN destination_by_root BOOLEAN NOT NULL DEFAULT TRUE;

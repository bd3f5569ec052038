-- Wrong codes sent for this address since the code was made; at 5 the code is void.
ALTER TABLE verification_codes ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;

ALTER TABLE channels DROP COLUMN destination_by_root;

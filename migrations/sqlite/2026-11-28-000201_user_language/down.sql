ALTER TABLE users DROP COLUMN language;

-- Tether SQLite schema, version 7: a lease keeps the TTL it was taken (or last renewed) with, so a
-- renew that names none keeps it (it used to become the 60 s default: a crashed holder's successor of
-- a 1.5 s lease waited 40 times longer than asked). Leases stored before keep 60 s, what renew gave them.
ALTER TABLE leases ADD COLUMN ttl_ms INTEGER NOT NULL DEFAULT 60000;

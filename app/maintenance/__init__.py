"""Maintenance: the recurring housekeeping jobs (purge of soft-deleted rows after their recovery window, of expired
idempotency records)."""

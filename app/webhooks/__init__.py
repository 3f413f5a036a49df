"""Webhooks (Standard Webhooks): endpoints per account, deliveries written with the change they report (an
outbox), sent and retried by workers, logged, replayable (docs/webhooks.md)."""

"""Core: what every domain shares and nothing domain-specific: errors, the actor, transactions with side effects
after commit, list parameters, idempotency, the audit trail, rate limits, types, PDF rendering."""

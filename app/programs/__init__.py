"""Programs: an account's screening programs (active, paused, archived: read-only), their event grouping and
report e-mails; entities live in a program."""

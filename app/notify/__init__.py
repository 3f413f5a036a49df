"""Notify: the report e-mails of checks that raised events, written with the check's results and sent by a job
after the commit (SMTP, or an outbox folder without one)."""

"""Billing: check prices (credits per check type, editable by operators) and the credit ledger (charges at launch,
refunds of failed checks, top-ups and adjustments). The balance is the ledger's sum and never goes below zero."""

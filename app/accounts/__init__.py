"""Accounts: the tenants, their portal users (roles admin, analyst, viewer), API keys, entitlements to products
and rate limits. Every other record belongs to one account; another account's uuid answers 404."""

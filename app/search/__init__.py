"""Global search: one box for entities, checks and events."""

"""Checks: operations run against an entity or an adhoc subject, launched together (a group) and run in the
background, each charged at launch and refunded if it fails; the result, its list versions and its PDF report."""

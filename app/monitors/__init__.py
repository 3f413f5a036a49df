"""Monitors: ongoing screening of a program's entities on a schedule (issue 19)."""

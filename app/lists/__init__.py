"""The screening lists as the platform runs them: which lists every account sees (the demo's invented lists only
the demo account), their versions and deltas, and the operator's decision on a held version (accept or reject).
The lists themselves and their store live in the engine (`app/screening`, Flask-free); this domain is the part
with actors, audit and jobs."""

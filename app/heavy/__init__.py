"""Heavy work off the request path: history and check PDFs, bulk imports and CSV exports run as jobs of their own
(`HeavyJob` rows, the `pdf` and `imports` queues), shared fairly between accounts (docs/heavy-jobs.md).

- `models`: the job row, the status resource of both doors;
- `fair`: the fair dispatcher (per-account pending lists in Redis, least-recently-served first, a cap on running
  jobs per account and on heavy slots in all) and the token bucket of work seconds per account;
- `services`: submit (dedupe, cache, admission), run (the worker side: progress, result, failure), the sweeper and
  the purge of old results;
- `queries`: a job of the caller's account (404 for any other), its result.

The work itself belongs to its domain, which registers a handler by kind (`services.handler`): the reports
(PDFs), the entities (imports), the events (exports). This package imports none of them."""

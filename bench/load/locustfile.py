"""The three users of the whole loop at once (issue 21 §3), for bench/load/run.py (which seeds the world, starts the
app and runs this file headless; see its docstring and bench/load/README.md).

- `Analyst`: signs in to the portal with a real user (the login form and its CSRF token), reads the inbox (tabs
  and pages), opens event pages, decides with the requests the event page's keyboard shortcuts send (htmx POST
  `/events/<uuid>/status` with the X-CSRFToken header, then the next event as `HX-Location` loads it), decides
  rows from the inbox (the row swap), adds notes (the notes fragment) and downloads check reports (PDF).
- `Integrator`: with the API key, onboards customers (create an entity, launch a check, poll it until it ends),
  re-screens known entities, launches adhoc checks, reads lists (entities, events, an entity's checks), and
  reviews events with PATCH /events/<uuid>.
- A webhook receiver: a threaded HTTP server in this process, subscribed with POST /api/v1/webhook-endpoints,
  that verifies every delivery's Standard Webhooks signature (`standardwebhooks`) and reports each as a locust
  request `WEBHOOK <type>` whose time is commit -> receipt (the payload's `timestamp` to the delivery's arrival);
  a signature that does not verify is a failure. When the endpoint answers 404 (no webhooks API in this build)
  the receiver switches itself off with a message and the rest runs.

Request names start with their group, `API`, `PORTAL`, `WEBHOOK` or `LOOP` (launch -> check ended, as the
integrator polled it), so that the figures per group are exact percentiles (written to locust_summary.json in the
results folder at the end), not a mix of the per-name ones.

Configuration: the JSON file named by LOAD_CONFIG (written by run.py): api_key, analysts (e-mails), password,
program, entities, listed (names of the synthetic list), rate (user actions a second, all users), users.
"""
from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections import defaultdict
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from urllib.parse import urlencode

from locust import FastHttpUser, constant_throughput, events, task

CONFIG = json.loads(open(os.environ["LOAD_CONFIG"]).read()) if os.environ.get("LOAD_CONFIG") else {
    "api_key": os.environ.get("LOAD_API_KEY", ""), "analysts": [], "password": "", "program": "", "entities": [],
    "listed": [], "rate": 10, "users": 10}
PACE = constant_throughput(max(CONFIG["rate"], 0.01) / max(CONFIG["users"], 1))  # actions a second, per user
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
EVENT_LINK = re.compile(rf'/events/({UUID})')
CHECK_LINK = re.compile(rf'/checks/({UUID})')
FORM_CSRF = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')
META_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
NOTES = ("Different date of birth: not the listed person.", "Customer sent a certified passport copy.",
         "Checked against the registry: same name, different person.", "Escalated for a second look.",
         "Adverse media relates to a namesake.", "Source of funds documents requested.")
FIRST = ("James Mary John Patricia Robert Jennifer Michael Linda Wei Olga Aisha Hiroshi Priya Ahmed Chen Yuki Ivan "
         "Mei Raj Ana Lucas Sofia Mateo Chloe").split()
LAST = "Smith Johnson Williams Brown Jones Garcia Miller Davis Wilson Anderson Taylor Moore Martin Lee Walker".split()
ENDED = ("complete", "failed")
POLL_SECONDS = 0.5
POLL_TIMEOUT = 120


def why(response) -> str:
    """A failure's words: the status and the body's start, or the connection error (status 0)."""
    error = getattr(response, "error", None)
    return f"{response.status_code} {error!r}" if response.status_code == 0 and error else \
        f"{response.status_code} {(response.text or '')[:200]}"


def person(rng: random.Random) -> dict:
    """A customer: a third of them a person of the synthetic list (with the listed date of birth, or none)."""
    if CONFIG["listed"] and rng.random() < 1 / 3:
        first, last, dob = rng.choice(CONFIG["listed"])
        return {"first_name": first, "last_name": last, **({"birth_date": dob} if dob else {})}
    return {"first_name": rng.choice(FIRST), "last_name": rng.choice(LAST),
            "birth_date": f"{rng.randint(1940, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"}


# ------------------------------------------------------------------ figures per group (exact percentiles)

class Figures:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.failures: dict[str, int] = defaultdict(int)
        self.samples: list[tuple[float, str, float]] = []  # (end time, group, ms): figures over a time window
        self.started = self.stopped = None
        self.webhooks = {"state": "not started", "verified": 0, "failed": 0, "duplicates": 0, "by_type": {}}
        self.lock = threading.Lock()

    def add(self, name: str, ms: float, failed: bool) -> None:
        with self.lock:
            self.times[name].append(ms)
            self.samples.append((round(time.time(), 3), name.split(" ", 1)[0].lower(), round(ms, 1)))
            if failed:
                self.failures[name] += 1

    @staticmethod
    def _stats(values: list[float], failures: int, seconds: float) -> dict:
        ordered = sorted(values)

        def pct(p: float) -> float:
            return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else 0.0
        return {"count": len(ordered), "failures": failures, "rps": len(ordered) / seconds if seconds else 0.0,
                "p50": pct(50), "p95": pct(95), "p99": pct(99), "max": ordered[-1] if ordered else 0.0,
                "mean": sum(ordered) / len(ordered) if ordered else 0.0}

    def summary(self) -> dict:
        seconds = ((self.stopped or time.time()) - (self.started or time.time())) or 1.0
        with self.lock:
            times = {k: list(v) for k, v in self.times.items()}
            failures = dict(self.failures)
        out = {"seconds": round(seconds, 1), "started": self.started, "by_name": {}, "webhooks": self.webhooks}
        groups: dict[str, list[float]] = defaultdict(list)
        group_failures: dict[str, int] = defaultdict(int)
        for name, values in times.items():
            out["by_name"][name] = self._stats(values, failures.get(name, 0), seconds)
            group = name.split(" ", 1)[0].lower()
            groups[group] += values
            group_failures[group] += failures.get(name, 0)
            if group in ("api", "portal"):  # "total": the HTTP requests the users made
                groups["total"] += values
                group_failures["total"] += failures.get(name, 0)
        for group in ("total", "api", "portal", "webhook", "loop"):
            out[group] = self._stats(groups.get(group, []), group_failures.get(group, 0), seconds)
        return out


FIGURES = Figures()


@events.request.add_listener
def _on_request(request_type, name, response_time, response_length, exception=None, **_kw):
    FIGURES.add(name, response_time, exception is not None)


# ------------------------------------------------------------------ webhook receiver

WEBHOOK_TYPES = ["check.completed", "check.failed", "event.created", "event.updated", "monitor_run.completed"]


class Receiver:
    def __init__(self) -> None:
        self.server: ThreadingHTTPServer | None = None
        self.secret: str | None = None
        self.seen: set[str] = set()

    def start(self) -> int:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                verified = receiver.receive(body, {k.lower(): v for k, v in self.headers.items()})
                self.send_response(204 if verified else 400)  # a refused signature: the sender sees it
                self.end_headers()

            def log_message(self, *args):  # quiet
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_address[1]

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server = None

    def receive(self, body: bytes, headers: dict) -> bool:
        """Verify and count one delivery; True when its signature verifies."""
        from standardwebhooks.webhooks import Webhook
        received = time.time()
        stats = FIGURES.webhooks
        if self.secret is None:
            return False
        try:
            payload = Webhook(self.secret).verify(body, headers)
        except Exception as exc:  # noqa: BLE001 (WebhookVerificationError, or a body that is not JSON)
            stats["failed"] += 1
            events.request.fire(request_type="WEBHOOK", name="WEBHOOK signature", response_time=0,
                                response_length=len(body), exception=exc)
            return False
        stats["verified"] += 1
        kind = payload.get("type", "?")
        stats["by_type"][kind] = stats["by_type"].get(kind, 0) + 1
        if headers.get("webhook-id") in self.seen:
            stats["duplicates"] += 1
        self.seen.add(headers.get("webhook-id", ""))
        try:
            committed = datetime.fromisoformat(payload["timestamp"].replace("Z", "+00:00")).timestamp()
        except (KeyError, TypeError, ValueError):
            committed = float(headers.get("webhook-timestamp") or received)
        events.request.fire(request_type="WEBHOOK", name=f"WEBHOOK {kind}", response_time=(received - committed) * 1000,
                            response_length=len(body), exception=None)
        return True

    def subscribe(self, host: str, port: int) -> None:
        import requests
        r = requests.post(f"{host}/api/v1/webhook-endpoints", timeout=30,
                          headers={"Authorization": f"Bearer {CONFIG['api_key']}"},
                          json={"url": f"http://127.0.0.1:{port}/webhooks", "event_types": WEBHOOK_TYPES,
                                "description": "load test receiver (bench/load)"})
        if r.status_code == 404:
            FIGURES.webhooks["state"] = "off: POST /api/v1/webhook-endpoints answered 404 (no webhooks API here)"
            print("[load] webhooks: POST /api/v1/webhook-endpoints answered 404: this build has no webhooks API yet. "
                  "The receiver is switched off; analysts and integrators run without it.", flush=True)
            self.stop()
            return
        if r.status_code != 201:
            FIGURES.webhooks["state"] = f"off: POST /api/v1/webhook-endpoints answered {r.status_code}"
            print(f"[load] webhooks: subscribing answered {r.status_code} {r.text[:300]}; receiver off.", flush=True)
            self.stop()
            return
        self.secret = r.json()["data"]["secret"]
        FIGURES.webhooks["state"] = "on"
        print(f"[load] webhooks: receiver on 127.0.0.1:{port}, subscribed to {', '.join(WEBHOOK_TYPES)}", flush=True)


RECEIVER = Receiver()


@events.test_start.add_listener
def _on_start(environment, **_kw):
    FIGURES.started = time.time()
    port = RECEIVER.start()
    RECEIVER.subscribe(environment.host, port)


@events.test_stop.add_listener
def _on_stop(environment, **_kw):
    FIGURES.stopped = time.time()


@events.quitting.add_listener
def _on_quit(environment, **_kw):
    time.sleep(2)  # the last deliveries of the checks that ended with the load
    RECEIVER.stop()
    if CONFIG.get("results"):
        with open(os.path.join(CONFIG["results"], "locust_summary.json"), "w") as fh:
            json.dump(FIGURES.summary(), fh, indent=2)
        with open(os.path.join(CONFIG["results"], "locust_samples.json"), "w") as fh:
            json.dump(FIGURES.samples, fh)


# ------------------------------------------------------------------ users

IDLE_RECONNECT_SECONDS = 0.5  # gunicorn closes a keep-alive connection idle for 2 s (its default --keep-alive);
# the margin: on a busy 2-core machine this process may not run for a second between its clock and its send


class FreshAfterIdle(FastHttpUser):
    """A request after more than IDLE_RECONNECT_SECONDS without one opens a new connection. Without it a POST sent
    on the connection the server is closing at that instant fails with HTTPConnectionClosed (a GET is retried by
    the client library, a POST may not be): a race of keep-alive timers between this client and the server, which
    a browser absorbs (it retries a request that failed on a reused idle connection), not an error of the app.
    Connections stay kept alive within an action (the event page and its decision, the polling)."""
    abstract = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        send, last = self.client.request, [time.monotonic()]

        def request(*a, **kw):
            if time.monotonic() - last[0] > IDLE_RECONNECT_SECONDS:
                self.client.client.close()  # the pool opens a new connection on the next use
            try:
                return send(*a, **kw)
            finally:
                last[0] = time.monotonic()
        self.client.request = request


# ------------------------------------------------------------------ analysts (portal)

_analyst_numbers = count()


class Analyst(FreshAfterIdle):
    weight = 1
    wait_time = PACE

    def on_start(self) -> None:
        self.rng = random.Random()
        self.email = CONFIG["analysts"][next(_analyst_numbers) % len(CONFIG["analysts"])]
        self.csrf = ""
        self.inbox: list[str] = []
        self.event: str | None = None
        self.check: str | None = None
        self.login()

    def form(self, fields: dict) -> tuple[bytes, dict]:
        return (urlencode({**fields, "csrf_token": self.csrf}, doseq=True).encode(),
                {"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true", "X-CSRFToken": self.csrf})

    def _page(self, response) -> str:
        text = response.text or ""
        token = META_CSRF.search(text)
        if token:
            self.csrf = token[1]
        return text

    def login(self) -> None:
        page = self.client.get("/login", name="PORTAL GET /login")
        token = FORM_CSRF.search(page.text or "")
        with self.client.post("/login", name="PORTAL POST /login (then the inbox)", catch_response=True,
                              data=urlencode({"email": self.email, "password": CONFIG["password"],
                                              "csrf_token": token[1] if token else ""}).encode(),
                              headers={"Content-Type": "application/x-www-form-urlencoded"}) as r:
            text = self._page(r)
            if r.status_code != 200 or 'name="password"' in text:
                r.failure(f"sign-in failed ({r.status_code})")
            else:
                self.inbox = EVENT_LINK.findall(text)

    @task(3)
    def read_inbox(self) -> None:
        params = self.rng.choice([{}, {}, {"status": "new"}, {"status": "investigating"}, {"status": "all"},
                                  {"status": "all", "page": str(self.rng.randint(1, 3))}])
        path = "/" + ("?" + urlencode(params) if params else "")
        with self.client.get(path, name="PORTAL GET / (inbox)", catch_response=True) as r:
            text = self._page(r)
            if r.status_code == 200:
                self.inbox = EVENT_LINK.findall(text) or self.inbox

    def open_event(self, uuid: str, name: str = "PORTAL GET /events/[uuid]", htmx: bool = False) -> bool:
        headers = {"HX-Request": "true", "HX-Target": "main"} if htmx else {}
        with self.client.get(f"/events/{uuid}", name=name, headers=headers, catch_response=True) as r:
            text = self._page(r)
            if r.status_code != 200:
                return False
        self.event = uuid
        checks = CHECK_LINK.findall(text)
        self.check = checks[0] if checks else self.check
        return True

    def pick(self) -> str | None:
        if not self.inbox:
            self.read_inbox()
        return self.rng.choice(self.inbox) if self.inbox else None

    def decision(self) -> dict:
        roll = self.rng.random()
        if roll < 0.4:
            return {"status": "investigating"}
        if roll < 0.85:
            return {"status": "closed_dismissed", "note": self.rng.choice(NOTES)}
        return {"status": "closed_confirmed", "note": "Same person: confirmed against the listing."}

    @task(5)
    def review_event(self) -> None:
        """Open an event, decide with a key (htmx POST, advance on), and land on the next event as htmx does."""
        uuid = self.pick()
        if not uuid or not self.open_event(uuid):
            return
        body, headers = self.form({**self.decision(), "advance": "1"})
        with self.client.post(f"/events/{uuid}/status", name="PORTAL POST /events/[uuid]/status (key)", data=body,
                              headers=headers, catch_response=True) as r:
            location = r.headers.get("HX-Location") if r.status_code == 200 else None
            if r.status_code == 200 and not location:
                r.failure("no HX-Location after a decision")
        if location:
            path = json.loads(location)["path"]
            following = EVENT_LINK.search(path)
            if following:
                self.open_event(following[1], name="PORTAL GET /events/[uuid] (next, htmx)", htmx=True)
            else:
                with self.client.get(path, name="PORTAL GET / (inbox, htmx)", headers={"HX-Request": "true"},
                                     catch_response=True) as page:
                    self.inbox = EVENT_LINK.findall(self._page(page)) or self.inbox

    @task(2)
    def decide_from_inbox(self) -> None:
        """A key on an inbox row: the row comes back (with the tabs' counts out of band)."""
        uuid = self.pick()
        if not uuid:
            return
        body, headers = self.form({**self.decision(), "from": "inbox"})
        self.client.post(f"/events/{uuid}/status", name="PORTAL POST /events/[uuid]/status (inbox row)", data=body,
                         headers=headers)

    @task(2)
    def add_note(self) -> None:
        uuid = self.event or self.pick()
        if not uuid:
            return
        body, headers = self.form({"note_text": self.rng.choice(NOTES)})
        self.client.post(f"/events/{uuid}/notes", name="PORTAL POST /events/[uuid]/notes", data=body,
                         headers=headers)

    @task(1)
    def download_pdf(self) -> None:
        if not self.check:
            uuid = self.pick()
            if not uuid or not self.open_event(uuid):
                return
        if not self.check:
            return
        with self.client.get(f"/checks/{self.check}/pdf", name="PORTAL GET /checks/[uuid]/pdf",
                             catch_response=True) as r:
            if r.status_code == 200 and not (r.content or b"").startswith(b"%PDF"):
                r.failure("not a PDF")


# ------------------------------------------------------------------ integrators (API)

class Integrator(FreshAfterIdle):
    weight = 2
    wait_time = PACE

    def on_start(self) -> None:
        self.rng = random.Random()
        self.headers = {"Authorization": f"Bearer {CONFIG['api_key']}"}
        self.new_events: list[str] = []

    def api(self, method: str, path: str, name: str, catch: bool = True, **kw):
        """A request with the key; a status other than 2xx is a failure (also without `catch`)."""
        return self.client.request(method, f"/api/v1{path}", name=f"API {method} {name}", headers=self.headers,
                                   catch_response=catch, **kw)

    def launch_and_wait(self, path: str, body: dict, name: str, show: str) -> None:
        started = time.perf_counter()
        with self.api("POST", path, name, json=body) as r:
            if r.status_code != 202:
                r.failure(why(r))
                return
            uuid = r.json()["data"]["uuid"]
        status = "pending"
        while status not in ENDED and time.perf_counter() - started < POLL_TIMEOUT:
            time.sleep(POLL_SECONDS)
            with self.api("GET", show.format(uuid), show.format("[uuid]")) as r:
                if r.status_code == 200:
                    status = r.json()["data"]["status"]
        elapsed = (time.perf_counter() - started) * 1000
        error = None if status == "complete" else RuntimeError(f"check {uuid} {status} after {elapsed:.0f} ms")
        events.request.fire(request_type="LOOP", name=f"LOOP {name} -> ended (polled)", response_time=elapsed,
                            response_length=0, exception=error)

    @task(3)
    def onboard(self) -> None:
        with self.api("POST", f"/programs/{CONFIG['program']}/entities", "/programs/[uuid]/entities",
                      json={"entity_type": "individual", **person(self.rng)}) as r:
            if r.status_code != 201:
                r.failure(why(r))
                return
            entity = r.json()["data"]["uuid"]
        self.launch_and_wait(f"/entities/{entity}/checks", {"check_types": ["pep_sanction_check"]},
                             "/entities/[uuid]/checks", "/checks/{}")

    @task(2)
    def rescreen(self) -> None:
        entity = self.rng.choice(CONFIG["entities"])
        self.launch_and_wait(f"/entities/{entity}/checks", {"check_types": ["pep_sanction_check"]},
                             "/entities/[uuid]/checks", "/checks/{}")

    @task(2)
    def adhoc(self) -> None:
        self.launch_and_wait("/adhoc-checks", {"check_types": ["pep_sanction_check"], "data": {
            k.replace("birth_date", "dob"): v for k, v in person(self.rng).items()}}, "/adhoc-checks",
            "/adhoc-checks/{}")

    @task(3)
    def read_lists(self) -> None:
        which = self.rng.random()
        if which < 0.35:
            self.api("GET", f"/programs/{CONFIG['program']}/entities", "/programs/[uuid]/entities",
                     params={"per_page": 25, "page": self.rng.randint(1, 5)}, catch=False)
        elif which < 0.7:
            with self.api("GET", "/events", "/events", params={"filter[status]": "new", "per_page": 25}) as r:
                if r.status_code == 200:
                    self.new_events = [e["uuid"] for e in r.json()["data"]] or self.new_events
        else:
            self.api("GET", f"/entities/{self.rng.choice(CONFIG['entities'])}/checks", "/entities/[uuid]/checks",
                     params={"per_page": 25}, catch=False)

    @task(2)
    def review_event(self) -> None:
        if not self.new_events:
            with self.api("GET", "/events", "/events", params={"per_page": 50}) as r:
                if r.status_code == 200:
                    self.new_events = [e["uuid"] for e in r.json()["data"]]
        if not self.new_events:
            return
        uuid = self.rng.choice(self.new_events)
        body = self.rng.choice([{"note": self.rng.choice(NOTES)}, {"status": "investigating"},
                                {"status": "closed_dismissed", "note": self.rng.choice(NOTES)}])
        with self.api("PATCH", f"/events/{uuid}", "/events/[uuid]", json=body) as r:
            if r.status_code != 200:
                r.failure(why(r))

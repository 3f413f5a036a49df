"""What every provider speaks: a subject and a resolved config in, an outcome with typed details out.

A provider answers one check type (`check_type`). It never touches the database or Flask: the checks service
hands it plain values and stores what it returns. An upstream that fails, times out or answers something we
cannot read raises `ProviderError`: the check ends `failed` and its credit is refunded; it never escapes as a
500. Alerts are the `warning` / `fail` rows of `results_overview`; each row carries stable `alert_ids`
(provider-side result ids, decimal strings: see `alert_ids`) and a `fingerprint` of the facts that decide it, so
that a re-screen can tell a new or changed alert from one already reviewed.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
import time
from typing import Any, Protocol, runtime_checkable

from app.core.subject import Subject

# Sandbox magic inputs (docs/sandbox.md): a subject whose last_name or business_name is one of these (any case).
MAGIC_FAIL = "sandbox-fail"
MAGIC_HIT = "sandbox-hit"
MAGIC_SLOW = "sandbox-slow"        # the upstream answers (clean) after SLOW_SECONDS
MAGIC_TIMEOUT = "sandbox-timeout"  # the upstream times out: a transient error, retried, then failed
MAGIC_WORDS = (MAGIC_FAIL, MAGIC_HIT, MAGIC_SLOW, MAGIC_TIMEOUT)
SLOW_SECONDS = 2.0


class ProviderError(Exception):
    """The upstream failed, timed out or answered something unreadable: fail the check, refund it."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


class ProviderNotConfigured(ProviderError):
    """A live account asked for a check type whose real upstream has no credentials here."""


def magic_word(subject: Subject) -> str | None:
    """The sandbox magic word the subject carries, if any."""
    for value in (subject.last_name, subject.business_name):
        word = (value or "").strip().lower()
        if word in MAGIC_WORDS:
            return word
    return None


def sandbox_magic(subject: Subject, check_type: str) -> str | None:
    """What a sandbox provider does first with the subject's magic word: fail, time out (retryable) or answer
    slowly; returns the word (the caller answers `sandbox-hit` with a hit)."""
    magic = magic_word(subject)
    if magic == MAGIC_FAIL:
        raise ProviderError(f"sandbox: {check_type} provider failure forced by the subject name")
    if magic == MAGIC_TIMEOUT:
        raise ProviderError(f"sandbox: the {check_type} upstream timed out (forced by the subject name)",
                            retryable=True)
    if magic == MAGIC_SLOW:
        time.sleep(SLOW_SECONDS)
    return magic


@dataclass
class ResultRow:
    """One row of `results_overview`: a finding (or a pass) with the ids of the provider results behind it."""

    title: str
    status: str                                 # pass | warning | fail
    alert_ids: list[str] = field(default_factory=list)
    fingerprint: str | None = None               # hash of the deciding facts (alerts only)

    def __post_init__(self) -> None:
        if self.status not in ("pass", "warning", "fail"):
            raise ValueError(f"bad result status {self.status!r}")
        if self.status == "pass":
            self.alert_ids = []
        else:
            self.alert_ids = alert_ids(self.alert_ids, self.title)

    @property
    def is_alert(self) -> bool:
        return self.status in ("warning", "fail")


@dataclass
class ProviderResult:
    results_overview: list[ResultRow]
    details: dict[str, Any]
    check_summary: str
    data_summary: str | None = None
    provider: str = ""                           # which implementation answered ("sandbox", "abr", ...)
    # The best results below the threshold, in the shape of `details["results"]` (check types that screen
    # lists, when the run asked for them: `RunContext.near_misses`); None: not kept. Never alerts.
    near_misses: list[dict[str, Any]] | None = None

    @property
    def outcome(self) -> str:
        """`warning` when any row alerts, else `pass` (the spec's two outcomes)."""
        return "warning" if any(r.is_alert for r in self.results_overview) else "pass"

    @property
    def alerts(self) -> list[ResultRow]:
        return [r for r in self.results_overview if r.is_alert]


@dataclass(frozen=True)
class RunContext:
    """What a provider may know about the run: the account's mode and the settings it needs."""

    sandbox: bool = True
    settings: dict[str, Any] = field(default_factory=dict)
    index: Any = None                            # the screening index, for the check types that use it
    demo: bool = False                           # the demo account: the only one that sees demo lists
    near_misses: bool = False                    # keep the best results below the threshold (a check's run)


@runtime_checkable
class Provider(Protocol):
    check_type: str
    name: str

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        ...


def fingerprint(*facts: Any) -> str:
    """A stable hash of the facts that decide an alert (names, dates, identifiers, programmes, positions)."""
    raw = json.dumps(facts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def stable_id(*parts: Any) -> str:
    """A provider-side result id that is the same for the same finding on every run: a decimal string of a
    48-bit integer, so that it reads the same as the integer `check_result_ids` of events (and stays a safe
    integer in JavaScript)."""
    return str(int(fingerprint(*parts)[:12], 16))


MAX_ALERT_ID = 2 ** 48


def alert_ids(ids: list[Any], title: str) -> list[str]:
    """The id rule, applied where results are made: every alert has at least one id and each id is the decimal
    string of an integer below 2**48, as `stable_id` makes them (events keep them as integers, and a dismissal
    is remembered by id). An id a provider gives in another form (a vendor's "MA-991", a UUID) becomes the
    `stable_id` of that id, the same on every run; an alert row without ids gets the `stable_id` of its title."""
    out = []
    for value in ids:
        text = str(value).strip()
        if not (text.isascii() and text.isdigit() and int(text) < MAX_ALERT_ID):
            text = stable_id("alert id", text)
        out.append(str(int(text)))
    return list(dict.fromkeys(out)) or [stable_id("alert row", title)]

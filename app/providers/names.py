"""Company-name comparison for the registry checks: legal-form words and punctuation folded away, then
RapidFuzz's token-set ratio (0..1)."""
from __future__ import annotations

import re

from anyascii import anyascii
from rapidfuzz import fuzz

_LEGAL = re.compile(r"\b(pty|ltd|limited|proprietary|plc|llp|lp|inc|incorporated|co|company|corp|corporation|"
                    r"the|and|trust|trustee|for|as|atf)\b")


def _fold(name: str) -> str:
    text = anyascii(name or "").lower().replace("&", " and ")
    text = re.sub(r"[^a-z0-9 ]+", " ", text)
    return " ".join(_LEGAL.sub(" ", text).split())


def name_similarity(a: str, b: str) -> float:
    fa, fb = _fold(a), _fold(b)
    if not fa or not fb:
        return 1.0 if anyascii(a or "").lower().strip() == anyascii(b or "").lower().strip() else 0.0
    if fa == fb:
        return 1.0
    return fuzz.token_set_ratio(fa, fb) / 100.0

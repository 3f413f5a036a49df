"""The words people read for a check, the same on the check page, in the PDF report and in the report e-mail.

The API keeps its codes (`warning`, `medium_search`, `similarity_threshold: "80"`); people read labels: a check
type by its registry label, a result status by one word, a score as a percentage, a subject key and a config
option by their labels, a config value through one formatter (`config_rows`), which also says what an empty
value means (the default `pep_countries: []` is every jurisdiction, never "none")."""
from __future__ import annotations

from typing import Any

from app.core.subject import SUBJECT_VALUE_LABELS, Subject, subject_key_label
from app.providers.configs import EMPTY_MEANS, OPTION_LABELS, OPTION_UNITS, VALUE_LABELS
from app.screening.engine import read_from

# One word per result status (a row of results_overview, and a check's outcome): the code, capitalised. An
# "alert" is a row whose status is warning or fail (the noun, never a status).
RESULT_LABELS = {"pass": "Pass", "warning": "Warning", "fail": "Fail"}

# Similarity scores (0..1) are shown as whole percentages; from SCORE_HIGH a score reads strong, from SCORE_MID
# close (the colour bands of the page).
SCORE_HIGH = 0.9
SCORE_MID = 0.8


def result_label(status: str | None) -> str:
    return RESULT_LABELS.get(status or "", status or "—")


def score_text(value: float | None) -> str:
    """0.873 → "87%" (None → "—")."""
    if value is None:
        return "—"
    return f"{round(float(value) * 100)}%"


def read_as(subject: dict | None, query_name: str | None) -> tuple[str, str] | None:
    """(the subject's name, the name a result matched with) when the screening read the subject's name another way
    ("Abdelaziz" as "Abd Al Aziz", engine 3.5.0: `engine.read_from`); None for a match with its own name."""
    if not query_name or not subject:
        return None
    own = read_from(Subject.from_dict(subject), query_name)
    return (own, query_name) if own else None


def titled(title: str, score: float | None) -> str:
    """An event's title with its score, once: "Sanctions match: X (100%)" already says it (the screening titles
    carry their score), other titles get " (score 87%)"; no score, the title alone."""
    if score is None or f"({score_text(score)})" in title:
        return title
    return f"{title} (score {score_text(score)})"


def score_band(value: float | None) -> str:
    """"high", "mid" or "low" (the bands of `SCORE_HIGH` and `SCORE_MID`)."""
    if value is None:
        return "low"
    return "high" if value >= SCORE_HIGH else "mid" if value >= SCORE_MID else "low"


def effect_text(effect: float | None) -> str:
    """A qualifier's effect on a score, in points of the percentage: 0.05 → "+5 points"."""
    return "—" if effect is None else f"{round(float(effect) * 100):+d} points"


# How a qualifier (date of birth, country, gender) compared, and whether that speaks for the match.
QUALIFIER_OUTCOMES = {"exact": "exact match", "year": "same year", "day": "day/month swapped", "near": "close",
                      "conflict": "differs", "match": "matches"}


def qualifier_outcome(outcome: str | None) -> str:
    return QUALIFIER_OUTCOMES.get(outcome or "", outcome or "—")


def option_label(key: str, *, with_unit: bool = False) -> str:
    label = OPTION_LABELS.get(key) or key.replace("_", " ").capitalize()
    unit = OPTION_UNITS.get(key)
    return f"{label} ({unit})" if with_unit and unit else label


def value_label(value: Any, key: str | None = None) -> str:
    """One allowed value of an option (or of a subject key with choices), as people read it."""
    if key in SUBJECT_VALUE_LABELS:
        return SUBJECT_VALUE_LABELS[key].get(str(value), str(value))
    return VALUE_LABELS.get(str(value), str(value))


def config_value(key: str, value: Any) -> str:
    """A resolved config value as text: labels for codes, the unit where the option has one, and what an empty
    value means for that option."""
    if value is True:
        return "Yes"
    if value is False:
        return "No"
    if value is None or value == "" or value == []:
        return EMPTY_MEANS.get(key, "None")
    if isinstance(value, (list, tuple)):
        return ", ".join(value_label(v) for v in value)
    text = value_label(value)
    unit = OPTION_UNITS.get(key)
    if unit and text == str(value):  # a number: "80%", "3 months" (but "No", not "No months")
        return f"{text}%" if unit == "%" else f"{text} {unit}"
    return text


def config_rows(config: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, text) for each option of a resolved config, in its order."""
    return [(option_label(k), config_value(k, v)) for k, v in (config or {}).items()]


def subject_rows(subject: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, text) for each key of a subject snapshot that has a value."""
    return [(subject_key_label(k), value_label(v, k)) for k, v in (subject or {}).items()
            if v not in (None, "")]

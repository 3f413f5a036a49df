"""The two check types our own engine answers, real everywhere (sandbox included): `pep_sanction_check` over the
PEP and sanctions lists, and `banned_disqualified_persons` over the ASIC banned and disqualified registers
(imported with `flask lists import --format asic-banned`).

Which lists count for which country (`pep_countries`, `sanction_countries`): a sanctions record counts when one
of the jurisdictions whose sanctions name it is in `sanction_countries` (the publisher's jurisdiction, e.g. OFAC
→ US, and any country named on the programme); the UN Security Council list binds every member state, so UN
records count whatever the filter. A PEP record counts when the country of one of its positions (else its
nationality) is in `pep_countries`; an empty `pep_countries` means every PEP jurisdiction.

Rows: a sanctioned party → `fail`; a PEP (not sanctioned) → `warning`; a banned or disqualified person →
`fail`; nothing found → one `pass` row. Each alert's id is stable for the listed record and its fingerprint
covers the record's deciding facts (names, dates, identifiers, programmes, positions), so a re-screen can tell
a changed record from one already reviewed."""
from __future__ import annotations

from typing import Any

from app.providers.base import ProviderError, ProviderResult, ResultRow, RunContext, Subject, fingerprint, stable_id
from app.providers.configs import BANNED_TYPES
from app.screening.engine import NEAR_MISS_COUNT, screen
from app.screening.records import DEMO_KIND


ALERT_ID_PREFIX = {"pep_sanction_check": "pep_sanction", "banned_disqualified_persons": "banned"}


def alert_id_for(check_type: str, record_id: str) -> str:
    """The alert id a listed record's alert has in this check type's results (a monitor finds the entities
    whose alerts name a changed or removed record by it)."""
    return stable_id(ALERT_ID_PREFIX[check_type], record_id)


def _deciding_facts(result: dict[str, Any]) -> tuple:
    props = result.get("properties") or {}

    def strip(objs: list[dict]) -> list[dict]:
        return sorted(({k: v for k, v in o.items() if k != "list_version"} for o in objs), key=repr)

    return (result["record"]["id"], result["name"], sorted(props.get("aliases", [])),
            sorted(props.get("birth_date", [])), sorted(props.get("nationality", [])),
            strip(result.get("sanction_matches") or []), strip(result.get("pep_matches") or []),
            sorted(props.get("positions", [])))


def _screen(ctx: RunContext, subject: Subject, config: dict[str, Any], near_misses: int = NEAR_MISS_COUNT):
    """Screen the subject; the best `near_misses` results below the threshold too when the run keeps them
    (`ctx.near_misses`: a check's run; a monitor's batch does not)."""
    if ctx.index is None:
        raise ProviderError("the screening lists are not loaded")
    if not (subject.person_name or subject.business_name or subject.vessel_name):
        raise ProviderError("no name to screen")
    return screen(ctx.index, subject, {**config, "hidden_lists": hidden_lists(ctx)},
                  near_misses=near_misses if ctx.near_misses else 0)


def hidden_lists(ctx: RunContext) -> tuple[str, ...]:
    """The lists this run may not see: the demo's invented lists, for every account but the demo account."""
    if ctx.demo or ctx.index is None:
        return ()
    return tuple(sorted(name for name, info in ctx.index.lists.items() if info.kind == DEMO_KIND))


def _details(outcome, subject: Subject, public_config: dict[str, Any], results: list[dict]) -> dict[str, Any]:
    return {"subject": outcome.subject, "config": public_config, "results": results,
            "list_versions": dict(outcome.list_versions), "engine_version": outcome.engine_version}


class PepSanctionProvider:
    check_type = "pep_sanction_check"
    name = "engine"

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        config = dict(config or {})
        outcome = _screen(ctx, subject, config)
        rows: list[ResultRow] = []
        for result in outcome.results:
            kind = "Sanctions" if result["is_sanctioned"] else "PEP"
            status = "fail" if result["is_sanctioned"] else "warning"
            rows.append(ResultRow(f"{kind} match: {result['name']} ({round(result['similarity'] * 100)}%)", status,
                                  [alert_id_for(self.check_type, result["record"]["id"])],
                                  fingerprint(*_deciding_facts(result))))
        if not rows:
            rows.append(ResultRow("No PEP or sanctions match", "pass"))
        public_config = {k: v for k, v in outcome.config.items() if k != "lists"}
        sanctioned = sum(r["is_sanctioned"] for r in outcome.results)
        peps = sum(r["is_pep"] and not r["is_sanctioned"] for r in outcome.results)
        summary = (f"{len(outcome.results)} potential match{'es' if len(outcome.results) != 1 else ''}: "
                   f"{sanctioned} sanctions, {peps} PEP" if outcome.results else "No PEP or sanctions match")
        return ProviderResult(results_overview=rows, details=_details(outcome, subject, public_config,
                                                                      outcome.results),
                              check_summary=summary + ".", data_summary=subject.display_name, provider="engine",
                              near_misses=outcome.near_misses)


class BannedDisqualifiedProvider:
    check_type = "banned_disqualified_persons"
    name = "engine"

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        config = dict(config or {})
        requested = list(config.get("banned_types") or [])
        wanted = set(requested or BANNED_TYPES)
        lists = sorted(name for name, info in (ctx.index.lists.items() if ctx.index is not None else ())
                       if info.kind == "banned")
        if not lists:
            raise ProviderError("the ASIC banned and disqualified registers are not loaded "
                                "(flask lists import --format asic-banned)")
        engine_config = {"search_type": config.get("search_type", "medium_search"),
                         "similarity_threshold": config.get("similarity_threshold", 80),
                         "max_results": 100, "lists": tuple(lists)}
        outcome = _screen(ctx, Subject(first_name=subject.first_name, middle_name=subject.middle_name,
                                       last_name=subject.last_name, full_name=subject.full_name,
                                       dob=subject.dob), engine_config, near_misses=4 * NEAR_MISS_COUNT)
        records = _banned_records(ctx.index, lists)

        def of_wanted_types(found: list[dict]) -> list[dict]:
            out = []
            for result in found:
                record = records.get(result["record"]["id"])
                props = record.properties if record is not None else {}
                if wanted.intersection(props.get("banned_type") or ()):
                    out.append(_banned_result(result, props))
            return out

        results = of_wanted_types(outcome.results)[:25]
        near_misses = of_wanted_types(outcome.near_misses)[:NEAR_MISS_COUNT] \
            if outcome.near_misses is not None else None
        rows = [ResultRow(f"{r['register']}: {r['name']} ({round(r['similarity'] * 100)}%)", "fail",
                          [alert_id_for(self.check_type, r["record_id"])],
                          fingerprint(r["record_id"], r["name"], r["banned_type"], r["start_date"], r["end_date"]))
                for r in results]
        if not rows:
            rows.append(ResultRow("Not on the banned and disqualified registers", "pass"))
        public_config = {"search_type": engine_config["search_type"],
                         "similarity_threshold": outcome.config["similarity_threshold"],
                         "banned_types": sorted(set(requested))}
        subject_out = {"first_name": subject.first_name, "middle_name": subject.middle_name,
                       "last_name": subject.last_name, "address_state": subject.address_state,
                       "address_country": subject.address_country}
        summary = (f"{len(results)} banned or disqualified record{'s' if len(results) != 1 else ''}"
                   if results else "Not on the banned and disqualified registers")
        return ProviderResult(results_overview=rows,
                              details={"subject": subject_out, "config": public_config, "results": results,
                                       "list_versions": dict(outcome.list_versions),
                                       "engine_version": outcome.engine_version},
                              check_summary=summary + ".", data_summary=subject.display_name, provider="engine",
                              near_misses=near_misses)


_banned_cache: list = [None, {}]  # [the index it was built from, {record id: ListRecord}]


def _banned_records(index, lists: list[str]) -> dict[str, Any]:
    """{record id: ListRecord} of the banned registers (built once per loaded index)."""
    if _banned_cache[0] is not index:
        wanted = set(lists)
        _banned_cache[:] = [index, {r.record.id: r.record for r in index.records if r.list_name in wanted}]
    return _banned_cache[1]


def _banned_result(result: dict[str, Any], props: dict[str, list[str]]) -> dict[str, Any]:
    def one(key: str) -> str | None:
        values = props.get(key) or []
        return values[0] if values else None

    return {"uuid": result["uuid"], "record_id": result["record"]["id"], "name": result["name"],
            "matched_name": result["matched_name"], "similarity": result["similarity"],
            "banned_type": one("banned_type"), "register": one("register") or "ASIC",
            "document_number": one("document_number"), "start_date": one("start_date"),
            "end_date": one("end_date"), "locality": one("locality"), "state": one("state"),
            "postcode": one("postcode"), "country": one("country"), "comments": one("comments"),
            "explanation": result.get("explanation")}

"""Screening a person by a name in Arabic, Cyrillic or Chinese script against lists that hold them only in Latin
(issue 23: retrieval across scripts).

    .venv/bin/python bench/screening_scripts.py [--data ../shared/data] [--faker 6000] [--write]

The lists' own original-script names are the queries: every listed person with a name written in Arabic,
Cyrillic or Han script is screened by that name (no other fact) against an index built from the same lists
with every name that is not in Latin letters left out, so the party can be found only through its Latin
names. Found: the party is among the results at the defaults (medium_search, 80); offered: it is a candidate
at all (threshold 10). False alarms on ordinary names: Faker people of many locales and scripts
(`bench/screening_quality.py`'s draw) against the same index. Nothing is written to the repository but, with
`--write`, the "## Screening across scripts" section of docs/performance.md.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SECTION = "## Screening across scripts"
SCRIPTS = ("ARABIC", "CYRILLIC", "CJK")


def script_of(text: str) -> str | None:
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            for script in SCRIPTS:
                if name.startswith(script):
                    return script
            return None if ord(ch) < 0x250 else "OTHER"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--faker", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--misses", type=int, default=8)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = Path(args.data)
    from screening import LISTS  # bench/screening.py
    from screening_quality import false_positives, faker_people

    from app.screening.engine import ENGINE_VERSION, ScreeningConfig, Subject, screen
    from app.screening.importers import parse_list
    from app.screening.index import ScreeningIndex

    items, versions, queries = [], {}, []
    for fmt, rel in LISTS:
        parsed = parse_list(fmt, data / rel)
        versions[parsed.info.name] = "v1"
        for r in parsed.records:
            latin = [n for n in r.names if script_of(n.full) is None]
            if r.schema == "Person":
                for n in r.names:
                    s = script_of(n.full)
                    if s in SCRIPTS and latin:
                        queries.append((s, n.full, r.id, latin[0].full))
            if latin:
                items.append((parsed.info, dataclasses.replace(r, names=latin)))
    started = time.perf_counter()
    index = ScreeningIndex(items, versions)
    print(f"index: {index.stats.records} records, {index.stats.names} names (Latin only), "
          f"{time.perf_counter() - started:.1f} s; {len(queries)} original-script names of people", file=sys.stderr)

    default, wide = ScreeningConfig(), ScreeningConfig(similarity_threshold=10, max_results=100)
    per: dict[str, list[int]] = {s: [0, 0, 0] for s in SCRIPTS}
    misses = []
    for script, name, rid, latin in queries:
        found = any(r["record"]["id"] == rid for r in screen(index, Subject(full_name=name), default).results)
        mine = [r for r in screen(index, Subject(full_name=name), wide).results if r["record"]["id"] == rid]
        offered = found or bool(mine)
        row = per[script]
        row[0] += 1
        row[1] += found
        row[2] += offered
        if not found and len(misses) < args.misses:
            best = f"{mine[0]['matched_name']}, {mine[0]['similarity']}" if mine else "not offered"
            misses.append(f"`{name}` ({script.lower()}): {best}")
    people = faker_people(args.faker, args.seed)
    fp = false_positives(index, people)

    total = [sum(v[i] for v in per.values()) for i in range(3)]
    lines = [SECTION, "", f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
             f"`bench/screening_scripts.py --faker {args.faker}`, engine {ENGINE_VERSION}: every listed person's "
             "name written in Arabic, Cyrillic or Han script (the lists' original-script names) screened, with no "
             "other fact, against the same lists with every non-Latin name left out; found: the party is a result "
             "at the defaults (medium_search, 80); offered: it is a result at threshold 10.", "",
             "| script | names | found at 80 | offered at all |", "|---|---:|---:|---:|"]
    for script in SCRIPTS:
        n, f, o = per[script]
        if n:
            lines.append(f"| {script.title()} | {n} | {100 * f / n:.1f}% ({f}) | {100 * o / n:.1f}% ({o}) |")
    lines.append(f"| **all** | {total[0]} | **{100 * total[1] / max(1, total[0]):.1f}%** | "
                 f"{100 * total[2] / max(1, total[0]):.1f}% |")
    lines += ["", f"False alarms on {fp['n']:,} Faker people of many locales and scripts against the same index: "
              f"**{fp['flagged']}** ({fp['flagged'] / fp['n']:.3%}; exact namesakes apart: {fp['namesakes']}).", ""]
    if misses:
        lines += ["Not found (first few):", ""] + [f"- {m}" for m in misses] + [""]
    if fp["examples"]:
        lines += ["False alarms:", ""] + [f"- {e}" for e in fp["examples"]] + [""]
    text = "\n".join(lines)
    print(text)
    if args.write:
        from independent_pairs import write_section

        write_section(text, SECTION)
        print("docs/performance.md updated", file=sys.stderr)


if __name__ == "__main__":
    main()

"""The open-source reference on our labelled name pairs: nomenklatura's matching algorithms (MIT; what yente
runs), for comparison with `flask screening compare-pairs`.

    .venv/bin/python bench/screening_quality.py --pairs-csv /tmp/pairs.csv       # writes the pairs
    python3 -m venv /tmp/nk && /tmp/nk/bin/pip install nomenklatura              # not one of our dependencies
    /tmp/nk/bin/python bench/reference_pairs.py /tmp/pairs.csv [--algorithm logic-v2]
    .venv/bin/python bench/independent_pairs.py --pairs-csv /tmp/ind.csv          # the independent pairs
    /tmp/nk/bin/python bench/reference_pairs.py /tmp/ind.csv --split held-out      # with each class's share right

Each pair becomes two entities of its schema with one `name` each (nothing else known, as compare-pairs
sees them); prints AUC (Mann-Whitney, ties half) and F1 at several thresholds. Runs under any interpreter that
has nomenklatura; imports nothing of ours.
"""
from __future__ import annotations

import argparse
import bisect
import csv
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs_csv")
    parser.add_argument("--algorithm", default="logic-v2")
    parser.add_argument("--split", help="only the pairs of this split (a `split` column: dev, held-out)")
    args = parser.parse_args()
    from followthemoney import model
    from nomenklatura.matching import get_algorithm
    from nomenklatura.matching.types import ScoringConfig

    algorithm = get_algorithm(args.algorithm)
    config = ScoringConfig.defaults()
    rows = [r for r in csv.DictReader(open(args.pairs_csv, encoding="utf-8"))
            if not args.split or r.get("split") == args.split]
    scored = []
    started = time.perf_counter()
    for i, row in enumerate(rows):
        schema = row["schema"] if row["schema"] in model.schemata else "LegalEntity"
        a, b = model.make_entity(schema), model.make_entity(schema)
        a.id, b.id = f"a{i}", f"b{i}"  # distinct ids: the algorithm caches by id
        a.add("name", row["name1"])
        b.add("name", row["name2"])
        scored.append((algorithm.compare(a, b, config).score, int(row["label"])))
    pos = sorted(s for s, y in scored if y)
    neg = sorted(s for s, y in scored if not y)
    u = sum(bisect.bisect_left(neg, s) + 0.5 * (bisect.bisect_right(neg, s) - bisect.bisect_left(neg, s))
            for s in pos)
    print(f"{args.algorithm}: {len(pos)} matches, {len(neg)} non-matches, AUC {u / (len(pos) * len(neg)):.3f}"
          f" ({time.perf_counter() - started:.1f} s)")
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.9):
        tp = sum(1 for s in pos if s >= threshold)
        fp = sum(1 for s in neg if s >= threshold)
        print(f"  F1 at {threshold:.2f}: {2 * tp / (2 * tp + fp + len(pos) - tp):.3f} (tp {tp}, fp {fp})")
    if rows and "class" in rows[0]:
        for cls in dict.fromkeys(r["class"] for r in rows):
            mine = [(s, y) for (s, y), r in zip(scored, rows) if r["class"] == cls]
            right = sum(1 for s, y in mine if (s >= 0.8) == bool(y))
            print(f"  {cls}: {100 * right / len(mine):.1f}% right at 0.80 ({len(mine)} pairs)")


if __name__ == "__main__":
    main()

"""What the inputs rule (app/core/inputs.py, issue 24) costs: per value, for ASCII and non-ASCII names and a note,
and for a whole 50,000-row CSV import's parsing (`csv_import.parse_csv`, every cell through the rule), and what a
public number costs to encode and decode (app/core/numbers.py: 10 HMAC-SHA256 rounds, memoised).

    .venv/bin/python bench/input_rule.py
"""
import _venv  # noqa: F401  (re-runs under the project's .venv)

import csv
import io
import random
import time


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    from app.core import inputs
    from app.entities.csv_import import parse_csv
    random.seed(1)
    samples = {"ascii name": "Rodriguez Orejuela", "accented name": "Rodríguez Orejuela",
               "persian name (ZWNJ)": "می\u200cخواهم", "han name": "李小龍",
               "note, 400 characters": ("Asked for a certified copy of the passport. " * 9)[:400]}
    print("per value (best of 5 runs of 100,000):")
    for label, value in samples.items():
        multiline = label.startswith("note")
        seconds = best(lambda: [inputs.clean_text(value, multiline=multiline) for _ in range(100_000)])
        print(f"  {label:24s} {seconds / 100_000 * 1e6:6.2f} us")
    names = ["Ava", "Numbat", "Gilberto José", "Rodríguez", "Müller", "李", "O'Brien", "می\u200cخواهم"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["entity_type", "first_name", "last_name", "reference_number"])
    for i in range(50_000):
        writer.writerow(["individual", random.choice(names), f"{random.choice(names)}{i}", f"R-{i}"])
    text = out.getvalue()
    seconds = best(lambda: parse_csv(text, max_rows=50_000), repeat=3)
    print(f"parse_csv, 50,000 rows x 4 cells: {seconds * 1000:.0f} ms")

    from app import create_app
    from app.config import TestConfig
    from app.core import numbers
    app = create_app({k: getattr(TestConfig, k) for k in dir(TestConfig) if k.isupper()} |
                     {"SQLALCHEMY_DATABASE_URI": "sqlite:///:memory:"})
    with app.app_context():
        from app.extensions import db
        db.create_all()
        alphabet, min_length, key, legacy = numbers._context()
        ids = list(range(1_000_000, 1_020_000))
        t = time.perf_counter()
        encoded = [numbers._encode.__wrapped__(alphabet, min_length, key, legacy, "entity", i) for i in ids]
        per_encode = (time.perf_counter() - t) / len(ids)
        t = time.perf_counter()
        assert [numbers.decode("entity", n) for n in encoded] == ids
        per_decode = (time.perf_counter() - t) / len(ids)
        print(f"public number: encode {per_encode * 1e6:.1f} us (uncached; memoised after), "
              f"decode {per_decode * 1e6:.1f} us")


if __name__ == "__main__":
    main()

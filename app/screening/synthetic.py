"""Synthetic list records for benchmarks (`flask lists generate-synthetic`): people with realistic names of many
locales and scripts (Faker's name data), aliases (name order, a Latin transliteration, a spelling variant),
dates of birth (full or year only), countries, genders; a tenth are companies. Deterministic for a seed.

Name pools are drawn from Faker once per locale (with Faker's own frequency weights, so common names are
common), then combined at random: realistic and fast enough for a million records.
"""
from __future__ import annotations

import random
from typing import Iterator

from anyascii import anyascii

from app.screening.records import ListInfo, ListRecord, Name, ParsedList

# locale -> ISO country (lowercase)
LOCALES = {
    "en_US": "us", "en_GB": "gb", "de_DE": "de", "fr_FR": "fr", "es_ES": "es", "es_MX": "mx", "it_IT": "it",
    "pt_BR": "br", "nl_NL": "nl", "pl_PL": "pl", "cs_CZ": "cz", "hu_HU": "hu", "ro_RO": "ro", "sv_SE": "se",
    "tr_TR": "tr", "ru_RU": "ru", "uk_UA": "ua", "el_GR": "gr", "he_IL": "il", "ar_AA": "sa", "fa_IR": "ir",
    "hi_IN": "in", "en_IN": "in", "zh_CN": "cn", "zh_TW": "tw", "ja_JP": "jp", "ko_KR": "kr", "vi_VN": "vn",
    "th_TH": "th", "id_ID": "id", "en_PH": "ph", "fil_PH": "ph", "bg_BG": "bg", "hr_HR": "hr", "fi_FI": "fi",
    "da_DK": "dk", "no_NO": "no", "ka_GE": "ge", "hy_AM": "am", "az_AZ": "az", "ne_NP": "np", "bn_BD": "bd",
}
POOL = 1500  # draws per locale and pool
LIST_NAME = "synthetic"


def name_pools(seed: int) -> list[tuple[str, dict[str, list[str]]]]:
    from faker import Faker
    out = []
    for i, locale in enumerate(sorted(LOCALES)):
        try:
            fake = Faker(locale)
        except AttributeError:
            continue
        fake.seed_instance(seed * 1000 + i)
        pools = {
            "male": [fake.first_name_male() for _ in range(POOL)],
            "female": [fake.first_name_female() for _ in range(POOL)],
            "last": [fake.last_name() for _ in range(POOL)],
            "company": [fake.company() for _ in range(POOL // 5)],
        }
        if hasattr(fake, "middle_name_male") and locale in ("ru_RU", "uk_UA"):
            pools["middle_male"] = [fake.middle_name_male() for _ in range(POOL // 3)]
            pools["middle_female"] = [fake.middle_name_female() for _ in range(POOL // 3)]
        out.append((locale, pools))
    return out


def _typo(rng: random.Random, name: str) -> str:
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    if len(letters) < 4:
        return name
    i = rng.choice(letters[1:])
    op = rng.random()
    if op < 0.4:
        return name[:i] + name[i + 1:]
    if op < 0.7:
        return name[:i] + name[i] + name[i:]
    return name[:i - 1] + name[i] + name[i - 1] + name[i + 1:]


def generate(count: int, seed: int = 1, list_name: str = LIST_NAME) -> ParsedList:
    return ParsedList(info=ListInfo(name=list_name, title=f"Synthetic records (seed {seed})",
                                    publisher="Sentinel Screening benchmarks", kind="sanction", jurisdiction=None),
                      records=list(iter_records(count, seed)), published_at=None, source=f"synthetic:{seed}")


def iter_records(count: int, seed: int = 1) -> Iterator[ListRecord]:
    rng = random.Random(seed)
    pools = name_pools(seed)
    for n in range(count):
        locale, p = pools[rng.randrange(len(pools))]
        country = LOCALES[locale]
        topics = ["sanction"] if rng.random() < 0.35 else ["role.pep"]
        if rng.random() < 0.1:
            caption = rng.choice(p["company"])
            names = []
            if not caption.isascii():
                names.append(Name(anyascii(caption), "alias"))
            yield ListRecord(id=f"syn-{seed}-{n}", schema="Company", caption=caption, names=names,
                             countries=[country], topics=topics,
                             sanctions=[{"authority": "Synthetic", "country": country.upper()}]
                             if topics == ["sanction"] else [])
            continue
        gender = "male" if rng.random() < 0.6 else "female"
        first = rng.choice(p[gender])
        if rng.random() < 0.15:
            first = f"{first} {rng.choice(p[gender])}"
        last = rng.choice(p["last"])
        middle = rng.choice(p[f"middle_{gender}"]) if f"middle_{gender}" in p and rng.random() < 0.7 else ""
        if locale in ("zh_CN", "zh_TW", "ja_JP", "ko_KR"):
            caption = f"{last}{first}" if rng.random() < 0.5 else f"{last} {first}"
        elif locale == "vi_VN":
            caption = f"{last} {first}"
        else:
            caption = " ".join(x for x in (first, middle, last) if x)
        names: list[Name] = []
        if not caption.isascii():
            names.append(Name(anyascii(caption).title(), "alias"))
        r = rng.random()
        if r < 0.3:
            names.append(Name(f"{last} {first}", "alias"))
        elif r < 0.45:
            names.append(Name(_typo(rng, anyascii(caption)), "weak"))
        dates: list[str] = []
        if rng.random() < 0.8:
            year = rng.randint(1935, 2002)
            dates.append(str(year) if rng.random() < 0.25 else f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
        countries = [country] + ([rng.choice(list(LOCALES.values()))] if rng.random() < 0.1 else [])
        yield ListRecord(id=f"syn-{seed}-{n}", schema="Person", caption=caption, names=names, birth_dates=dates,
                         countries=countries, topics=topics, gender=gender,
                         sanctions=[{"authority": "Synthetic", "country": country.upper()}]
                         if topics == ["sanction"] else [],
                         positions=[{"title": "Official", "country": country.upper()}]
                         if topics == ["role.pep"] else [])

"""Name pairs from sources independent of the lists' alias conventions: a development part to tune on and a
held-out part to report on (issue 23).

    .venv/bin/python bench/independent_pairs.py [--seed 23] [--per-class 120] [--pairs-csv /tmp/ind.csv]
                                                [--split held-out] [--write]

Every pair is generated at run time from the seed (nothing is stored): people's names by Faker (MIT) in many
locales and scripts, written in another script or romanization by libraries made for it (ICU through PyICU,
`pypinyin`, `hangul-romanize`; the German and French transliterations of Cyrillic, which no library offers, by
their published letter tables below), nicknames from the `nicknames` dataset (MIT), numbers in words by
`num2words` (LGPL), and the classes of issue 23 that should not match (an Arabic chain in another order, a
branch in another city, another name inside a long chain, another ordinal). Each pair carries its class; a
pair goes to "dev" or "held-out" by the seed (half each), so that rules are tuned on dev and reported on the
part no one looked at. These packages are bench tools (the `bench` extra), not the engine's.

Prints, for the chosen split (default: both), AUC (Mann-Whitney, ties half), F1 at 0.80 (the default threshold)
and each class's share right (a match scoring >= 0.80, a non-match below). `--pairs-csv` writes the pairs with
their class and split for `bench/reference_pairs.py` (nomenklatura's logic-v2 on the same pairs); `--write`
replaces the "## Independent name pairs" section of docs/performance.md.
"""
from __future__ import annotations

import argparse
import csv
import random
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SECTION = "## Independent name pairs"
THRESHOLD = 0.80
PERSON, ORG = "Person", "Organization"

LATIN_LOCALES = ("en_US", "en_GB", "fr_FR", "de_DE", "es_ES", "it_IT", "pt_BR", "nl_NL", "pl_PL", "sv_SE",
                 "cs_CZ", "ro_RO", "hu_HU")
# native-script locales and the ICU transform that romanizes them as BGN/PCGN does (the US and UK
# governments' systems, which sanctions lists follow)
SCRIPT_LOCALES = {"ru_RU": "Russian-Latin/BGN", "uk_UA": "Ukrainian-Latin/BGN", "bg_BG": "Bulgarian-Latin/BGN",
                  "el_GR": "Greek-Latin/BGN", "he_IL": "Hebrew-Latin/BGN", "ar_AA": "Arabic-Latin/BGN",
                  "fa_IR": "Persian-Latin/BGN", "hy_AM": "Armenian-Latin/BGN", "ka_GE": "Georgian-Latin/BGN"}
CYRILLIC_LOCALES = ("ru_RU", "uk_UA", "bg_BG")

# The German (Duden) and French transliterations of Russian Cyrillic, letter by letter (lower case), as
# newspapers in those languages write Russian names ("Gorbatschow", "Eltsine").
GERMAN = {"а": "a", "б": "b", "в": "w", "г": "g", "д": "d", "е": "e", "ё": "jo", "ж": "sch", "з": "s", "и": "i",
          "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
          "у": "u", "ф": "f", "х": "ch", "ц": "z", "ч": "tsch", "ш": "sch", "щ": "schtsch", "ъ": "", "ы": "y",
          "ь": "", "э": "e", "ю": "ju", "я": "ja", "і": "i", "ї": "ji", "є": "je", "ґ": "g"}
FRENCH = {"а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "io", "ж": "j", "з": "z", "и": "i",
          "й": "ï", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
          "у": "ou", "ф": "f", "х": "kh", "ц": "ts", "ч": "tch", "ш": "ch", "щ": "chtch", "ъ": "", "ы": "y",
          "ь": "", "э": "e", "ю": "iou", "я": "ia", "і": "i", "ї": "ї", "є": "ie", "ґ": "g"}
# Lithuanian writes foreign names with its own letters and case endings: the Cyrillic letters as Lithuanian
# spells them, then a masculine ending ("Vladimiras Jakovlevas"); Latvian likewise ("Mihails Gorbačovs").
LITHUANIAN = {"а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "jo", "ж": "ž", "з": "z", "и": "i",
              "й": "j", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
              "у": "u", "ф": "f", "х": "ch", "ц": "c", "ч": "č", "ш": "š", "щ": "šč", "ъ": "", "ы": "y",
              "ь": "", "э": "e", "ю": "ju", "я": "ja", "і": "i", "ї": "ji", "є": "je", "ґ": "g"}
LATVIAN = dict(LITHUANIAN, х="h", ы="i", щ="šč")

# Arabic given names and family names as English-language lists write them (generator input, not a rule)
ARABIC_GIVEN = ("Omar", "Khalid", "Ahmed", "Hamid", "Yousef", "Ibrahim", "Abdullah", "Saeed", "Hassan", "Hussein",
                "Tariq", "Faisal", "Nasser", "Salem", "Majid", "Rashid", "Jamal", "Karim", "Walid", "Ziad",
                "Mustafa", "Adel", "Sami", "Nabil", "Bilal", "Marwan", "Fahad", "Sultan", "Mansour", "Anwar")
ARABIC_FAMILY = ("AL-MANSOURI", "AL-TOUNSI", "AL-HARBI", "AL-QAHTANI", "AL-SHAMMARI", "AL-ZAHRANI", "AL-OTAIBI",
                 "AL-GHAMDI", "AL-DOSARI", "AL-MUTAIRI", "AL-ANSARI", "AL-HASHIMI", "AL-KUWARI", "AL-MARRI")
LINKS = ("BIN", "IBN", "BEN")
ORG_KINDS = ("Bank of {}", "{} Trading", "{} Shipping", "{} Holdings", "{} Insurance", "{} Petroleum",
             "{} Investment Fund", "{} Logistics")
LEGAL = ("S.A.", "Ltd.", "GmbH", "LLC", "Inc.", "B.V.", "S.p.A.")
UNITS = ("Regiment", "Battalion", "Brigade", "Division", "Squadron", "Fleet")
ORDINALS = ("I", "II", "III", "IV", "V")
ACRONYM_WORDS = ("National", "International", "United", "General", "Central", "Federal", "Eastern", "Western",
                 "Maritime", "Petroleum", "Industrial", "Chemical", "Electric", "Mining", "Shipping", "Trading",
                 "Investment", "Development", "Engineering", "Aviation", "Steel", "Tanker", "Energy")
ACRONYM_TAILS = ("Company", "Corporation", "Bank", "Group", "Authority", "Organization")


def _translit(rule: str):
    import icu

    return icu.Transliterator.createInstance(rule)


def strip_marks(text: str) -> str:
    """The text without combining marks (the vowel points of Hebrew and Arabic, Greek accents)."""
    return unicodedata.normalize("NFC", "".join(ch for ch in unicodedata.normalize("NFD", text)
                                                if not unicodedata.combining(ch)))


def by_table(text: str, table: dict[str, str]) -> str:
    out = []
    for ch in text:
        low = ch.lower()
        if low in table:
            rep = table[low]
            out.append(rep[:1].upper() + rep[1:] if ch != low and rep else rep)
        else:
            out.append(ch)
    return "".join(out)


def baltic(word: str, latvian: bool) -> str:
    """A masculine name with the Lithuanian (-as, -is for -ий/-ій) or Latvian (-s, -ijs) ending."""
    low = word.lower()
    if low.endswith(("ий", "ій", "ый")):
        return by_table(word[:-2], LATVIAN if latvian else LITHUANIAN) + ("ijs" if latvian else "ijus")
    if low[-1:] in "ая":
        return by_table(word, LATVIAN if latvian else LITHUANIAN)
    stem = by_table(word.rstrip("ьЬ"), LATVIAN if latvian else LITHUANIAN)
    return stem + ("s" if latvian else "as")


class Generator:
    """Draws the labelled pairs of each class from one seed."""

    def __init__(self, seed: int, per_class: int) -> None:
        from faker import Faker

        self.rng = random.Random(seed)
        self.n = per_class
        self.fakers = {}
        for k, loc in enumerate(LATIN_LOCALES + tuple(SCRIPT_LOCALES) + ("zh_CN", "ko_KR", "ja_JP", "lt_LT")):
            fake = Faker(loc)
            fake.seed_instance(seed * 1000 + k)
            self.fakers[loc] = fake
        self.ascii = _translit("Any-Latin; Latin-ASCII")
        self.icu = {loc: _translit(f"{rule}; Any-Latin; Latin-ASCII") for loc, rule in SCRIPT_LOCALES.items()}

    def male(self, loc: str) -> tuple[str, str]:
        fake = self.fakers[loc]
        return fake.first_name_male(), fake.last_name_male() if hasattr(fake, "last_name_male") else fake.last_name()

    def person(self, loc: str) -> tuple[str, str]:
        fake = self.fakers[loc]
        if self.rng.random() < 0.5:
            return self.male(loc)
        last = fake.last_name_female() if hasattr(fake, "last_name_female") else fake.last_name()
        return fake.first_name_female(), last

    # ----- should match -----

    def native_script(self):
        """A name in its own script against its romanization by BGN/PCGN (ICU), pinyin (`pypinyin`),
        the Revised Romanization (`hangul-romanize`) or Faker's Japanese romanization."""
        from hangul_romanize import Transliter
        from hangul_romanize.rule import academic
        from pypinyin import lazy_pinyin

        korean = Transliter(academic)
        locs = list(SCRIPT_LOCALES) + ["zh_CN", "ko_KR", "ja_JP"]
        for i in range(self.n):
            loc = locs[i % len(locs)]
            fake = self.fakers[loc]
            if loc == "zh_CN":
                last, first = fake.last_name(), fake.first_name()
                native = last + first
                py = lazy_pinyin(native)
                latin = f"{py[0].title()} {''.join(py[1:]).title()}" if self.rng.random() < 0.5 else \
                    f"{''.join(py[1:]).title()} {py[0].upper()}"
            elif loc == "ko_KR":
                last, first = fake.last_name(), fake.first_name()
                native = last + first
                given = "-".join(korean.translit(ch) for ch in first).title()
                latin = f"{korean.translit(last).title()} {given}"
            elif loc == "ja_JP":
                native = f"{fake.last_kana_name()} {fake.first_kana_name()}"
                latin = self.ascii.transliterate(native).title()
            else:
                first, last = self.person(loc)
                native = f"{first} {last}"
                latin = self.icu[loc].transliterate(native).replace("'", "")
                latin = " ".join(w.title() for w in latin.split())
            yield "native script / romanized", 1, PERSON, native, latin

    def foreign_in_script(self):
        """A Western name written in Cyrillic, Greek, Hebrew or Arabic script (ICU's Latin-to-script transforms;
        the vowel points of Hebrew and Arabic dropped, as they are written, and a word's first vowel written
        with an alef), against the Latin original. ICU's Latin-Katakana and Latin-Hangul read Latin as romaji
        and Korean romanization, not as English or French spelling ("Ottavio" -> "オッタヰオ"), and nothing
        writes a Western name in Chinese characters: those classes are left out."""
        scripts = (("Latin-Cyrillic", LATIN_LOCALES), ("Latin-Greek", LATIN_LOCALES),
                   ("Latin-Hebrew", LATIN_LOCALES), ("Latin-Arabic", LATIN_LOCALES))
        alef = {"Latin-Hebrew": "\u05d0", "Latin-Arabic": "\u0627"}
        for i in range(self.n):
            rule, locs = scripts[i % len(scripts)]
            loc = locs[self.rng.randrange(len(locs))]
            first, last = self.person(loc)
            latin = f"{first} {last}"
            plain = self.ascii.transliterate(latin).lower()
            written = strip_marks(_translit(rule).transliterate(plain))
            if rule in alef:
                written = " ".join(alef[rule] + w if p[:1] in "aeiou" else w
                                   for w, p in zip(written.split(), plain.split()))
            yield "foreign name in another script", 1, PERSON, written, latin

    def romanizations(self):
        """One name in two romanization systems: Russian, Ukrainian and Bulgarian names in BGN/PCGN, ISO 9
        (ICU, accents dropped), German and French; Chinese in pinyin and Wade-Giles (`pypinyin`)."""
        from pypinyin import Style, lazy_pinyin

        iso9 = _translit("Cyrillic-Latin; Latin-ASCII")
        for i in range(self.n):
            if i % 4 == 3:
                fake = self.fakers["zh_CN"]
                native = fake.last_name() + fake.first_name()
                py = lazy_pinyin(native)
                wg = [s.replace("'", "").replace("ü", "u").replace("v", "u")
                      for s in lazy_pinyin(native, style=Style.WADEGILES)]
                a = f"{py[0].title()} {''.join(py[1:]).title()}"
                b = f"{wg[0].title()} {'-'.join(wg[1:]).title()}"
                yield "another romanization", 1, PERSON, b, a
                continue
            loc = CYRILLIC_LOCALES[i % len(CYRILLIC_LOCALES)]
            first, last = self.male(loc) if self.rng.random() < 0.7 else self.person(loc)
            native = f"{first} {last}"
            systems = [self.icu[loc].transliterate(native).replace("'", ""), iso9.transliterate(native),
                       self.ascii.transliterate(by_table(native, GERMAN)),
                       self.ascii.transliterate(by_table(native, FRENCH))]
            a, b = self.rng.sample(systems, 2)
            if a.lower() == b.lower():
                a, b = systems[0], systems[2]
            yield "another romanization", 1, PERSON, a, b

    def baltic_endings(self):
        """A Russian name as Lithuanian or Latvian writes it (their letters and a masculine case ending)
        against its BGN romanization."""
        for i in range(self.n):
            first, last = self.male("ru_RU")
            latvian = i % 2 == 1
            written = f"{baltic(first, latvian)} {baltic(last, latvian)}"
            yield ("Baltic endings", 1, PERSON, written,
                   self.icu["ru_RU"].transliterate(f"{first} {last}").replace("'", ""))

    def nicknames(self):
        """An English given name against one of its nicknames (the `nicknames` dataset), same family name."""
        import nicknames

        triplets = sorted((t.name1, t.name2) for t in nicknames.name_triplets()
                          if t.relationship == "has_nickname" and t.name1 != t.name2)
        for _ in range(self.n):
            name, nick = triplets[self.rng.randrange(len(triplets))]
            last = self.fakers[("en_US", "en_GB")[self.rng.randrange(2)]].last_name()
            yield "nickname", 1, PERSON, f"{nick.title()} {last}", f"{name.title()} {last}"

    def initials(self):
        """Given names written as initials: "J. R. Smith" / "John Robert Smith", "M. Smith" / "Mark Smith"."""
        for i in range(self.n):
            loc = LATIN_LOCALES[self.rng.randrange(len(LATIN_LOCALES))]
            fake = self.fakers[loc]
            first, last = self.person(loc)
            given = [first] + ([fake.first_name()] if i % 2 else [])
            short = " ".join(g[0] + "." for g in given) + f" {last}"
            if i % 3 == 2:
                short = f"{given[0]} " + " ".join(g[0] + "." for g in given[1:]) + f" {last}" if len(given) > 1 \
                    else short
            yield "initials", 1, PERSON, short, " ".join(given) + f" {last}"

    def numbers(self):
        """A number written in figures against its words (`num2words`), cardinal or ordinal, in English,
        French, Spanish and German."""
        from num2words import num2words

        langs = ("en", "en", "fr", "es", "de")
        for i in range(self.n):
            lang = langs[i % len(langs)]
            n = self.rng.randint(1, 99)
            unit = UNITS[self.rng.randrange(len(UNITS))]
            if i % 2:
                suffix = {"en": ("st", "nd", "rd")[n % 10 - 1] if n % 10 in (1, 2, 3) and n // 10 != 1 else "th",
                          "fr": "e", "es": "o", "de": "."}[lang]
                a = f"{n}{suffix} {unit}"
                b = f"{num2words(n, to='ordinal', lang=lang).title()} {unit}"
            else:
                a = f"{unit} {n}"
                b = f"{unit} {num2words(n, lang=lang).title()}"
            yield "number and words", 1, ORG, a, b

    def acronyms(self):
        """An organization's acronym against its long form."""
        for _ in range(self.n):
            words = self.rng.sample(ACRONYM_WORDS, self.rng.randint(2, 4))
            words.append(ACRONYM_TAILS[self.rng.randrange(len(ACRONYM_TAILS))])
            yield "acronym", 1, ORG, "".join(w[0] for w in words).upper(), " ".join(words)

    # ----- should not match -----

    def chain_order(self):
        """Father and son: "OMAR BIN KHALID AL-X" / "KHALID BIN OMAR AL-X"."""
        for _ in range(self.n):
            a, b = self.rng.sample(ARABIC_GIVEN, 2)
            link = LINKS[self.rng.randrange(len(LINKS))]
            fam = ARABIC_FAMILY[self.rng.randrange(len(ARABIC_FAMILY))]
            yield "bin chain in another order", 0, PERSON, f"{a} {link} {b} {fam}", f"{b} {link} {a} {fam}"

    def chain_differs(self):
        """Cousins: one name inside a long chain differs ("... BEN ALI BEN AHMED AL-X" / "... BEN HAMID ...")."""
        for _ in range(self.n):
            a, b, c, d = self.rng.sample(ARABIC_GIVEN, 4)
            link = LINKS[self.rng.randrange(len(LINKS))]
            fam = ARABIC_FAMILY[self.rng.randrange(len(ARABIC_FAMILY))]
            yield ("another name inside a chain", 0, PERSON, f"{a} {link} {b} {link} {c} {fam}",
                   f"{a} {link} {b} {link} {d} {fam}")

    def branches(self):
        """Two branches of one organization in two cities: "Bank of X (Paris) S.A." / "Bank of X (Tokyo) Ltd."."""
        for _ in range(self.n):
            loc = LATIN_LOCALES[self.rng.randrange(len(LATIN_LOCALES))]
            fake = self.fakers[loc]
            name = ORG_KINDS[self.rng.randrange(len(ORG_KINDS))].format(fake.last_name())
            c1, c2 = fake.city(), self.fakers["en_US"].city()
            if c1 == c2:
                continue
            l1, l2 = self.rng.choice(LEGAL), self.rng.choice(LEGAL)
            yield "branch in another city", 0, ORG, f"{name} ({c1}) {l1}", f"{name} ({c2}) {l2}"

    def ordinals(self):
        """Two funds or vessels of one series: "X Fund II" / "X Fund III"."""
        for _ in range(self.n):
            fake = self.fakers[LATIN_LOCALES[self.rng.randrange(len(LATIN_LOCALES))]]
            name = ORG_KINDS[self.rng.randrange(len(ORG_KINDS))].format(fake.last_name())
            i = self.rng.randrange(len(ORDINALS) - 1)
            j = self.rng.choice([k for k in range(len(ORDINALS)) if k != i])
            yield "another ordinal", 0, ORG, f"{name} {ORDINALS[i]}", f"{name} {ORDINALS[j]}"

    def namesakes(self):
        """Two people of one family name, given names not nicknames of each other, in one locale (a third of
        them the first written in its own script)."""
        import nicknames

        nick = nicknames.NickNamer()
        locs = LATIN_LOCALES + CYRILLIC_LOCALES + ("el_GR", "ar_AA")
        for i in range(self.n):
            loc = locs[i % len(locs)]
            f1, last = self.male(loc)
            f2, _ = self.male(loc)
            if (f1 == f2 or f2.lower() in nick.nicknames_of(f1.lower()) | nick.canonicals_of(f1.lower())
                    or f1 in f2 or f2 in f1):  # "Davi" / "Davi Luiz": one given name inside the other
                continue
            a = f"{f1} {last}"
            b = f"{f2} {last}"
            if loc in SCRIPT_LOCALES:
                b = self.icu[loc].transliterate(b).replace("'", "")
            yield "another person, same family name", 0, PERSON, a, b

    def other_numbers(self):
        """Another number in words: "Regiment 17" / "Regiment Seventy"."""
        from num2words import num2words

        for _ in range(self.n):
            n = self.rng.randint(1, 99)
            m = self.rng.choice([k for k in range(1, 100) if k != n])
            unit = UNITS[self.rng.randrange(len(UNITS))]
            yield "another number", 0, ORG, f"{unit} {n}", f"{unit} {num2words(m).title()}"

    def other_initials(self):
        """An initial that is not the other's given name: "J. Smith" / "Mark Smith"."""
        for _ in range(self.n):
            loc = LATIN_LOCALES[self.rng.randrange(len(LATIN_LOCALES))]
            first, last = self.male(loc)
            other, _ = self.male(loc)
            if self.ascii.transliterate(other[0]).lower() == self.ascii.transliterate(first[0]).lower():
                continue  # "Ł." may abbreviate a name written "L..." once folded
            yield "initial of another name", 0, PERSON, f"{other[0]}. {last}", f"{first} {last}"

    def pairs(self) -> list[dict]:
        out = []
        for gen in (self.native_script, self.foreign_in_script, self.romanizations, self.baltic_endings,
                    self.nicknames, self.initials, self.numbers, self.acronyms, self.chain_order,
                    self.chain_differs, self.branches, self.ordinals, self.namesakes, self.other_numbers,
                    self.other_initials):
            for cls, label, schema, a, b in gen():
                a, b = " ".join(a.split()), " ".join(b.split())
                if a and b and a != b:
                    out.append({"class": cls, "label": label, "schema": schema, "name1": a, "name2": b})
        split = random.Random(self.rng.random())
        for row in out:
            row["split"] = "dev" if split.random() < 0.5 else "held-out"
        return out


def auc_f1(scored: list[tuple[float, int]], threshold: float = THRESHOLD) -> tuple[float, float, int, int]:
    import bisect

    pos = sorted(s for s, y in scored if y)
    neg = sorted(s for s, y in scored if not y)
    u = sum(bisect.bisect_left(neg, s) + 0.5 * (bisect.bisect_right(neg, s) - bisect.bisect_left(neg, s))
            for s in pos)
    tp = sum(1 for s in pos if s >= threshold)
    fp = sum(1 for s in neg if s >= threshold)
    f1 = 2 * tp / (2 * tp + fp + len(pos) - tp) if tp else 0.0
    return u / (len(pos) * len(neg)), f1, tp, fp


def report(rows: list[dict], scores: list[float], split: str) -> list[str]:
    idx = [i for i, r in enumerate(rows) if split == "all" or r["split"] == split]
    auc, f1, tp, fp = auc_f1([(scores[i], rows[i]["label"]) for i in idx])
    npos = sum(rows[i]["label"] for i in idx)
    lines = [f"**{split}**: {len(idx):,} pairs ({npos:,} matches), AUC **{auc:.3f}**, F1 at 0.80 **{f1:.3f}** "
             f"(tp {tp:,}, fp {fp:,})", "", "| class | should | pairs | right | example (score) |",
             "|---|---|---:|---:|---|"]
    classes = []
    for i in idx:
        if rows[i]["class"] not in classes:
            classes.append(rows[i]["class"])
    for cls in classes:
        mine = [i for i in idx if rows[i]["class"] == cls]
        label = rows[mine[0]]["label"]
        right = sum(1 for i in mine if (scores[i] >= THRESHOLD) == bool(label))
        wrong = [i for i in mine if (scores[i] >= THRESHOLD) != bool(label)]
        ex = wrong[0] if wrong else mine[0]
        lines.append(f"| {cls} | {'match' if label else 'not match'} | {len(mine)} | {100 * right / len(mine):.1f}% "
                     f"| {'wrong: ' if wrong else ''}\"{rows[ex]['name1']}\" / \"{rows[ex]['name2']}\" "
                     f"({scores[ex]:.2f}) |")
    return lines


def write_section(text: str, section: str = SECTION) -> None:
    """Replace `section` of docs/performance.md with `text` (or append it)."""
    path = ROOT / "docs" / "performance.md"
    current = path.read_text(encoding="utf-8")
    start = current.find(section + "\n")
    if start == -1:
        new = current.rstrip("\n") + "\n\n" + text
    else:
        end = current.find("\n## ", start + len(section))
        new = current[:start] + text + ("\n" + current[end + 1:] if end != -1 else "")
    path.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--per-class", type=int, default=120)
    parser.add_argument("--split", choices=("dev", "held-out", "both", "all"), default="both")
    parser.add_argument("--pairs-csv", help="write the pairs (with class and split) for bench/reference_pairs.py")
    parser.add_argument("--wrong", type=int, default=0, help="print up to N wrong pairs per class (dev only)")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md (held-out and dev)")
    args = parser.parse_args()

    from app.screening.engine import ENGINE_VERSION
    from app.screening.pairs import pair_score

    rows = Generator(args.seed, args.per_class).pairs()
    if args.pairs_csv:
        with open(args.pairs_csv, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=["class", "split", "label", "schema", "name1", "name2"])
            w.writeheader()
            w.writerows(rows)
    started = time.perf_counter()
    scores = [pair_score(r["name1"], r["name2"], r["schema"]) for r in rows]
    elapsed = time.perf_counter() - started
    splits = ("dev", "held-out") if args.split == "both" else (args.split,)
    lines = [SECTION, "", f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
             f"`bench/independent_pairs.py --seed {args.seed} --per-class {args.per_class}`, engine "
             f"{ENGINE_VERSION}, `pairs.pair_score` (what `flask screening compare-pairs` writes; {len(rows):,} "
             f"pairs scored in {elapsed:.1f} s). A match is right at >= 0.80, a non-match below.", ""]
    for split in splits:
        lines += report(rows, scores, split) + [""]
    text = "\n".join(lines)
    print(text)
    if args.wrong:
        seen: dict[str, int] = {}
        for r, s in zip(rows, scores):
            if r["split"] == "dev" and (s >= THRESHOLD) != bool(r["label"]) and seen.get(r["class"], 0) < args.wrong:
                seen[r["class"]] = seen.get(r["class"], 0) + 1
                print(f"  {r['class']}: {r['name1']!r} / {r['name2']!r} {s:.3f}")
    if args.write:
        write_section(text)
        print("docs/performance.md updated", file=sys.stderr)


if __name__ == "__main__":
    main()

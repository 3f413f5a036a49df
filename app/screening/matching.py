"""Name and qualifier scoring (pure Python over plain data).

Names are compared part by part. Every query name part ("unit": a token, or two adjacent tokens written
together, so "Abdulrahman" meets "Abdul Rahman") is aligned with at most one part of the listed name, best
pairs first. A pair's similarity comes from the edit distance (optimal string alignment: a swap of two
letters is one edit) with a floor for parts that sound alike (Metaphone key and first letter equal). Which
pairs may align at all is the search type's business:

- narrow: identical parts only;
- medium: identical, one edit, or same sound;
- broad: up to two edits, same sound, and an initial against a name starting with it.

The name score is the length-weighted share of both names that aligned, each aligned pair counting for its
similarity. Parts of the listed name left over count less than parts of the query left over (lists carry
long patronymic chains; a query part that matches nothing is evidence against).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

import jellyfish
from rapidfuzz.distance import OSA, Levenshtein

from app.screening.normalize import undouble

SEARCH_TYPES = ("narrow_search", "medium_search", "broad_search")

# Tunable constants, one place. Changing any of them changes ENGINE_VERSION's meaning: bump it.
PHONETIC_FLOOR = 0.82        # similarity of two parts that sound alike (same Metaphone and first letter),
PHONETIC_STEP = 0.03         # less per edit beyond the first
PHONETIC_MIN_LEN = 5         # shorter parts sound alike too easily ("Hurt"/"Huerta")
SHORT_TOKEN_LEN = 6          # a substitution in a part this short changes the name ("Kevin"/"Devin"):
SHORT_SUBSTITUTION_COST = 2.0  # it costs this many edits (a swap, an insertion or a deletion stays at 1)
INNER_TYPO_MIN_LEN = 5       # ... unless it is one letter inside a part this long, first and last kept
INITIAL_SIM = 0.75           # broad only: "J" against "John"
LIST_LEFTOVER_WEIGHT = 0.65  # a listed-name part nobody aligned with weighs this much of its weight
EXPLAINED_LEFTOVER_WEIGHT = 0.2  # ... when it is a patronymic, an initial or a particle
QUERY_LEFTOVER_WEIGHT = 1.0  # a query part that aligned with nothing
FAMILY_MISMATCH_CAP = 0.75   # a person's score when the last parts of both names are left over, and any
                             # name's when both hold a number the other lacks
ORG_CONTAINED_WEIGHT = 0.4   # a listed organization's word beyond a query of 2+ words that all aligned
PERSON_CONTAINED_WEIGHT = 0.4  # a listed person's part before or after a query of 3+ parts that all aligned in
PERSON_CONTAINED_MIN_PARTS = 3  # order (particles and initials not counted; never fewer: two parts against three
                                # stay below 0.80 unexplained)
MIDDLE_LEFTOVER_WEIGHT = 0.4  # a part of either name left over between two aligned parts (a middle name),
MIDDLE_MIN_LEN = 4             # this long and not a romanized CJK syllable
SIM_EXPONENT = 1.25          # a pair contributes weight * sim ** 1.25: near misses count less than equals
# Patronymics and nasab particles: a listed part of this shape that the query lacks is explained. Only the
# East Slavic and Turkic forms: a South Slavic "-ovic" (Bosnjakovic), a German "-ich" (Friedrich) or an
# English "-son" (Johnson) is a family or given name.
PATRONYMIC_SUFFIXES = ("ovich", "evich", "ovych", "evych", "ovna", "evna", "ivna", "yevich", "ichna", "oglu", "ogly",
                       "uly", "kyzy", "qizi", "dottir")
# Belarusian writes them "-avich", "-auna", "-euna", "-ouna", ў also as "w" (Uladzimiravich, Uladzimirauna,
# Piatrouna, Aliaksandrawna: Vladimirovich, Vladimirovna, Petrovna, Aleksandrovna); only in parts of 9+ letters,
# as "Savich" (Savić) is a family name and "Shauna", "Shawna" given names.
BELARUSIAN_PATRONYMIC_SUFFIXES = ("avich", "auna", "euna", "ouna", "awna", "ewna")
BELARUSIAN_PATRONYMIC_MIN_LEN = 9
# "Muhammad" (and its spellings and short forms) before the name a person goes by, and lineage titles:
# explained when left over as the first of three parts or more (`align`)
PREFIX_NAMES = frozenset("muhammad mohammad mohammed mohamed muhammed mohamad muhamad mohd md muh syed sayed sayyid "
                         "sayyed seyed seyyed hafiz hafez".split())
# A part after one of these is a father's name, a patronymic written in words ("Mehdi Ben Mohamed KAMMOUN")
NASAB = frozenset("bin ibn ben bint binti ould wuld wld walad".split())
# Names that are chains of given names (Arabic, Somali, Afghan and Pakistani names in the lists: a given name,
# the father's, the grandfather's) end with a father's or grandfather's name that a shorter form leaves out:
# "Khalil Ibrahim MOHAMED" is Khalil son of Ibrahim son of Mohamed, "Khalil IBRAHIM" the same man. The
# common given names that end such chains, in their usual spellings (a family name - "Haddad", "Karimi",
# "al-Tikriti", "Smith" - is not one of them, and left over it still counts):
CHAIN_NAMES = frozenset("""
muhammad mohammad mohammed mohamed muhammed mohamad muhamad mohamud mahamed ahmad ahmed ahmat ali aly umar omar
usman osman uthman othman ibrahim ebrahim ismail ismael yusuf yousef yousif yusef yousuf musa mousa isa issa eisa
yahya hasan hassan husayn hussein husain hussain hosein hossein mahmud mahmoud mahmood mustafa mostafa khalid
khaled khalil salih saleh salim salem said saeed masud masood abdallah abdullah abdulla abdalla abdi nur noor
jama farah hamid hamed rashid rashed karim kareem aziz yasin yassin adam idris sulayman suleiman sulaiman dawud
daud yaqub yaqoob hamza bilal tariq zayd zaid jafar faisal nasir nasser mansur mansour qasim qassem kassem sharif
amin ameen wali gul""".split())
THEOPHORIC_PREFIXES = frozenset("abd abdul abdel abdal abdol abdu".split())  # "Abdul Ghani": one given name
THEOPHORIC_SUFFIXES = ("ullah", "allah", "ulla")  # "Rehmatullah", "Habibullah"
# The Arabic article as romanizations write it: one part ("AL-GADDAFI"/"EL-QADDAFI"; engine 2.5.0)
ARTICLES = frozenset(("al", "el"))
PARTICLES = frozenset("al el bin ibn bint ben ould abu abd de del della di da do dos das van von der den le la "
                      "mac mc y e and of the for und et".split())  # the last: filler words of organization names
TRANSPOSITION_DISCOUNT = 0.65  # a swap counts as 0.35 of an edit
DOUBLED_LETTER_COST = 0.35   # "mohamad"/"mohammad", "esa"/"essa": a transliteration variant, not another name
MIN_PART_LEN_FOR_EDIT = 3    # shorter parts must be identical (or phonetic + 1 edit)
ABJAD_SIM = 0.9             # a part written without vowels (an abjad script) against one with the same consonants
ABJAD_SHORT_SIM = 0.75      # ... when one or two consonants are left ("ly" / "ali"; "hsn" / "hasan" has 3)
ABJAD_ARTICLE_SIM = 0.85    # ... with the article joined to it, left out of the other ("lthr" / "Taher"): less than
                            # the article and the name written together against two ("ltkryty" / "al Tikriti")
SPELLING_MIN_LEN = 4         # parts this long with the same spelling key ("Kassem"/"Qasim") ...
SPELLING_SIM = 0.94          # ... are one name written two ways, as near as a doubled letter (engine 2.3.0;
                             # 2.2.0 had 0.88)
CJK_SPELLING_SIM = 0.88      # two romanized Chinese or Korean syllables with one key ("Cho"/"Jo"): in pinyin
                             # itself "Tong" and "Dong" are two family names
SPELLING_EDIT_MIN_LEN = 7    # and this long, one edit apart once folded ("Aleksandr"/"Alexander") ...
SPELLING_EDIT_SIM = 0.8
VOWEL_MIN_LEN = 5            # parts this long, one vowel apart once folded, with the same consonants (3+) and
VOWEL_MIN_CONSONANTS = 3     # last letter, are one name too (engine 2.3.0) ...
SHORT_VOWEL_SIM = 0.88       # ... a little less sure than one key
KIND_FACTOR = {"primary": 1.0, "alias": 1.0, "original_script": 1.0, "former": 0.97, "weak": 0.88}


@lru_cache(maxsize=200_000)
def phonetic_key(token: str) -> str:
    if not token.isalpha():
        return ""
    try:
        return jellyfish.metaphone(token)
    except Exception:  # pragma: no cover - metaphone on odd input
        return ""


@lru_cache(maxsize=16_384)  # query units (the index files each listed part once, at build)
def sound_keys(token: str, query: bool = False) -> tuple[str, ...]:
    """The keys under which the index files a part for "sounds alike" lookups: its Metaphone key, its
    spelling key (prefixed "~") and its abjad key, when long enough to mean something. The abjad key of a
    part without vowels is filed under "%", of one with vowels under "&"; a query part looks up the other
    kind (the rule compares a part without vowels with one that has them)."""
    keys = []
    key = phonetic_key(token) if len(token) >= 4 else ""
    if len(key) >= 2:
        keys.append(key)
    if len(token) >= SPELLING_MIN_LEN or (len(token) >= 2 and cjk_syllable(token)):
        keys.append("~" + spelling_key(token))
    if len(token) >= 2 and token.isalpha():
        key = abjad_key(token)
        vowelless = _vowelless(token)
        rest = _article_less(token) if vowelless else ""
        if query:  # seek the other kind; short keys hold too many parts at 1M records to be worth it
            if len(key) >= (2 if vowelless else 3):
                keys.append(("&" if vowelless else "%") + key)
            if rest:
                keys.append("&" + abjad_key(rest))
        else:
            if len(key) >= 2 or len(token) <= 4:
                keys.append(("%" if vowelless else "&") + key)
            if rest:
                keys.append("%" + abjad_key(rest))
    return tuple(keys)


def part_similarity(a: str, b: str, search_type: str = "medium_search") -> float:
    """Similarity of two name parts in 0..1, or 0.0 when the search type does not let them align."""
    if a == b:
        return 1.0
    if search_type == "narrow_search":
        return 0.0
    alpha_a, ua, vowelless_a, sa, cjk_a, abjad_a = _features(a)
    alpha_b, ub, vowelless_b, sb, cjk_b, abjad_b = _features(b)
    if not alpha_a or not alpha_b:
        return 0.0  # numbers ("2655" / "2656", "33rd" / "99th") are equal or different
    la, lb = len(a), len(b)
    longest = la if la > lb else lb
    shortest = lb if la > lb else la
    if la == 1 or lb == 1:
        if search_type == "broad_search" and a[0] == b[0]:
            return INITIAL_SIM
        return 0.0
    if la == lb == 2 and a == b[::-1]:
        return 0.75  # "el"/"le"
    if a in ARTICLES and b in ARTICLES:
        return SPELLING_SIM
    if ua == ub:
        return 1.0 - DOUBLED_LETTER_COST * abs(la - lb) / longest if la != lb else 1.0 - 1.0 / longest
    # edits allowed: none below 3 letters, one (medium), two from 5 letters (broad)
    limit = 0 if shortest < MIN_PART_LEN_FOR_EDIT else 1 if search_type == "medium_search" or shortest < 5 else 2
    d = OSA.distance(a, b, score_cutoff=limit if limit > 3 else 3)
    if d <= limit:
        # a swap of two neighbouring letters is the commonest typo: it costs half an edit
        swaps = Levenshtein.distance(a, b, score_cutoff=2 * d) - d
        cost = d - TRANSPOSITION_DISCOUNT * swaps
        if la == lb and longest <= SHORT_TOKEN_LEN and not swaps and not _inner_typo(a, b, d):
            cost = SHORT_SUBSTITUTION_COST * d   # "kevin"/"devin": another name, not a typo
        elif la != lb and longest <= SHORT_TOKEN_LEN and (a[1:] == b or b[1:] == a) and \
                (a if la > lb else b)[0] not in _DROPPED_FIRST:
            # a consonant before a short name makes another name ("Amer"/"Samer", "Erkan"/"Serkan"), as a
            # letter changed does; not an "h" or a vowel, which romanizations drop ("Habib"/"Abib",
            # "Ismail"/"Smail")
            cost = SHORT_SUBSTITUTION_COST
        sim = max(0.0, 1.0 - cost / longest)
    else:
        sim = 0.0
        if (ua != a or ub != b) and min(len(ua), len(ub)) >= MIN_PART_LEN_FOR_EDIT:
            # a typo beside a doubled letter ("Mohmed" / "Mohammed"): the typo, plus the doubling; the first
            # letter kept, as for any typo ("Jaakko" / "Sako" is another name, as "Kevin" / "Devin" is)
            d2 = OSA.distance(ua, ub, score_cutoff=limit)
            if d2 <= limit and ua[0] == ub[0]:
                sim = max(0.0, 1.0 - (d2 + DOUBLED_LETTER_COST) / longest)
    if d <= 3 and shortest >= PHONETIC_MIN_LEN and 2 * d < shortest and a[0] == b[0]:
        ka = phonetic_key(a)
        if len(ka) >= 2 and ka == phonetic_key(b):
            sim = max(sim, PHONETIC_FLOOR - PHONETIC_STEP * (d - 1))
    if sim < ABJAD_SIM and vowelless_a != vowelless_b:  # one part without vowels, one with
        ka, kb = abjad_a, abjad_b
        if ka == kb and (len(ka) >= 2 or longest <= 4):   # "ly" / "ali": one consonant, short names
            sim = max(sim, ABJAD_SIM if len(ka) >= 3 else ABJAD_SHORT_SIM)
        else:  # the article joined to the part without vowels, left out of the other ("ltkryty" / "Tikriti")
            rest = _article_less(a) or _article_less(b)
            if rest and abjad_key(rest) == (kb if vowelless_a else ka):
                sim = max(sim, ABJAD_ARTICLE_SIM)
    if sim < SPELLING_SIM and (shortest >= SPELLING_MIN_LEN or (cjk_a and cjk_b)):
        if sa == sb:
            cjk = shortest < SPELLING_MIN_LEN or cjk_a or cjk_b
            sim = max(sim, CJK_SPELLING_SIM if cjk else SPELLING_SIM)
        elif shortest >= VOWEL_MIN_LEN and OSA.distance(sa, sb, score_cutoff=1) <= 1:
            if _one_vowel_apart(a, b, sa, sb, abjad_a, abjad_b):
                # one vowel apart once folded, consonants all kept ("Hikmetyar"/"Hekmatyar", "Peyman"/"Payman",
                # "Ehsan"/"Ahsan"): the short vowels that Arabic and Persian script leave unwritten, which
                # every romanization supplies its own way. The last letter kept: "Carla"/"Carlo" is another.
                sim = max(sim, SHORT_VOWEL_SIM)
            elif shortest >= SPELLING_EDIT_MIN_LEN and sa[0] == sb[0]:
                sim = max(sim, SPELLING_EDIT_SIM)
    return sim


_BURMESE_VOWELS = frozenset("aeiou")
_DROPPED_FIRST = frozenset("haeiouy")


@lru_cache(maxsize=262_144)
def _features(token: str) -> tuple[bool, str, bool, str, bool, str]:
    """What `part_similarity` reads of a part, computed once per part: whether it is letters only, the part
    with doubled letters undone, whether it has no vowel, its spelling key, whether it is one romanized CJK
    syllable, its abjad key."""
    alpha = token.isalpha()
    # Burmese writes its aspirated t "ht" or "t" ("Htun"/"Tun", "Htay"/"Tay"): a variant, as a doubled letter is
    bare = token[1:] if token[:2] == "ht" and token[2:3] in _BURMESE_VOWELS else token
    return (alpha, undouble(bare), _vowelless(token), spelling_key(token) if alpha else "",
            cjk_syllable(token), abjad_key(token) if alpha else "")


def _one_vowel_apart(a: str, b: str, sa: str, sb: str, ka: str, kb: str) -> bool:
    """Spelling keys one edit apart (the caller checked) that differ in a vowel only: the same consonants
    (three or more), the same last letter, and the same first letter unless both start with a vowel. A part
    shorter than SPELLING_EDIT_MIN_LEN keeps its consonants as written, doubled ones too ("Samer" is not
    "Summer"). `ka`, `kb`: the parts' abjad keys."""
    if sa[-1] != sb[-1] or (sa[0] != sb[0] and not (sa[0] in "aeiou" and sb[0] in "aeiou")):
        return False
    if len(ka) < VOWEL_MIN_CONSONANTS or ka != kb:
        return False
    return min(len(a), len(b)) >= SPELLING_EDIT_MIN_LEN or _consonants(a) == _consonants(b)


def _consonants(token: str) -> str:
    return "".join(ch for ch in token if ch not in "aeiouyw")


# Transliteration spellings of one sound, folded to one letter: "Kassem"/"Qasim", "Yousef"/"Yusuf",
# "Borysivna"/"Borisovna", "Djordjevic"/"Dordevic", "Moqadam"/"Moghaddam" (Persian gh/q, one letter).
_SPELLING_RULES = (("chr", "kr"), ("sch", "s"), ("tch", "ch"), ("dzh", "j"), ("dj", "d"), ("zh", "j"), ("kh", "h"),
                   ("gh", "k"), ("ph", "f"), ("th", "t"), ("dh", "d"), ("ck", "k"), ("q", "k"), ("x", "ks"),
                   ("w", "v"), ("ou", "u"), ("oo", "u"), ("ee", "i"), ("y", "i"), ("e", "i"), ("o", "u"))
_HARD_C = re.compile(r"c(?!h)")
_RUSSIAN_YO = re.compile(r"(?<=[bcdfgklmnprstvz])yo")


_VOWEL = re.compile("[aeiou]")


@lru_cache(maxsize=65_536)
def _vowelless(token: str) -> bool:
    """A part as an abjad writes it: no vowel, but for an "a" at either end, which the script writes (an alef
    at the start, "آخوند" -> "akhwnd"; an alef or alef maqsura at the end, "مصطفى" -> "mstfa"), when three
    letters without a vowel stand between ("Asma", "Anna" are names with vowels)."""
    if _VOWEL.search(token) is None:
        return True
    core = token[1:] if token[:1] == "a" else token
    core = core[:-1] if core[-1:] == "a" else core
    return len(core) >= 3 and _VOWEL.search(core) is None


def _article_less(token: str) -> str:
    """A part without vowels written with the Arabic article joined ("التكريتي" -> "ltkryty"), without it: ""
    when it is not one (at least three consonants must remain)."""
    if len(token) >= 4 and token[0] == "l" and _vowelless(token):
        rest = token[1:]
        if len(abjad_key(rest)) >= 3:
            return rest
    return ""


@lru_cache(maxsize=16_384)
def abjad_key(token: str) -> str:
    """A part as Arabic, Persian or Hebrew script writes it, with its short vowels unwritten: the spelling key
    without vowels, and without "y"/"w" (long vowels) after the first letter ("Ibrahim" and "brhym", the
    transliteration of إبراهيم, are both "brhm")."""
    s = _abjad_spelling(token)
    s = s[0] + "".join(ch for ch in s[1:] if ch not in "aeiouyvw") if s[0] not in "aeiou" else \
        "".join(ch for ch in s if ch not in "aeiouyvw")
    return undouble(s)


# The spelling rules that hold between a romanization with vowels and the letters of the script itself: two
# letters with "h" are not folded, as a part without vowels writes a letter and the "h" after it as such
# ("thr" is ط ه ر, "Tahir"; "khld" is خ ل د, "Khalid"), and a "j" before a vowel is a consonant ("jlyl",
# "Jalil"). Two letters are read as the scripts' letters: the French "dj" is ج ("Djamel", "jml"), and "dh"
# (ذ, ظ) is "z" in Persian and Urdu romanizations ("mdhhry", "Mazhari"; "Nazir", "ndhyr").
_ABJAD_RULES = (("dj", "j"), ("dh", "z")) + tuple(
    (old, new) for old, new in _SPELLING_RULES if not (len(old) == 2 and old[1] == "h") and old != "dj")


@lru_cache(maxsize=16_384)
def _abjad_spelling(token: str) -> str:
    s = token
    for old, new in _ABJAD_RULES:
        if old in s:
            s = s.replace(old, new)
    return undouble(_HARD_C.sub("k", s))


_CJK_VOICED = {"ch": "j", "zh": "j", "ts": "j", "k": "g", "t": "d", "p": "b", "q": "j"}
_CJK_INITIAL = re.compile(r"^(ch|zh|ts|k|t|p|q)")


@lru_cache(maxsize=65_536)
def spelling_key(token: str) -> str:
    """The token with transliteration variants folded (see _SPELLING_RULES) and doubled letters undone."""
    if cjk_syllable(token):
        # romanizations of one Chinese or Korean syllable: "Cho"/"Jo", "Pom"/"Bom", "Kim"/"Gim", "Tong"/"Dong"
        if token[0] != "l" and _HANGUL.fullmatch(token):
            # Korean vowels as the Revised Romanization writes them (eo, eu) and as McCune-Reischauer does
            # once its breves are dropped (ŏ, ŭ: o, u), as North Korean names are listed: "Eun"/"Un",
            # "Seong"/"Song". Korean writes no initial "l": "Leon", "Leo" are other names.
            token = token.replace("eo", "o").replace("eu", "u")
        return undouble(_CJK_INITIAL.sub(lambda m: _CJK_VOICED[m.group(0)], token, count=1))
    s = "i" + token[1:] if token[:1] == "j" and token[1:2] in ("a", "e", "i", "o", "u") else token
    if "yo" in s:  # Russian ё after a consonant, written "yo" or "e" ("Fyodor"/"Fedor", "Alyona"/"Alena")
        s = _RUSSIAN_YO.sub("e", s)
    if len(s) >= 7 and s.endswith("enka"):
        s = s[:-1] + "o"  # Belarusian "-enka" for the Ukrainian and Russian "-enko" ("Lukashenka"/"Lukashenko")
    if len(s) >= 6 and s[-2:] == "ou" and s[-3] not in "aeiouy":
        s = s[:-2] + "ov"  # Belarusian ў at the end, written "-ou" for the Russian "-ov" ("Kubrakou"/"Kubrakov")
    for old, new in _SPELLING_RULES:
        if old in s:
            s = s.replace(old, new)
    s = _HARD_C.sub("k", s)
    return undouble(s)


def _inner_typo(a: str, b: str, d: int) -> bool:
    """One substituted letter inside a part of 5 or more letters, first and last letters kept ("Murad" /
    "Mursd", "Scott" / "Siott"): the shape of a typing error. A changed first letter ("Kevin" / "Devin") or
    a short part stays another name."""
    if d != 1 or len(a) < INNER_TYPO_MIN_LEN or a[0] != b[0] or a[-1] != b[-1]:
        return False
    return True


def explained_leftover(token: str) -> bool:
    """A listed part whose absence from the query is expected: an initial, a particle, a patronymic."""
    return (len(token) == 1 or token in PARTICLES or (len(token) >= 6 and token.endswith(PATRONYMIC_SUFFIXES))
            or (len(token) >= BELARUSIAN_PATRONYMIC_MIN_LEN and token.endswith(BELARUSIAN_PATRONYMIC_SUFFIXES)))


def _uniform(_token: str) -> float:
    return 1.0


@dataclass
class Alignment:
    """The result of aligning a query name with a listed name."""

    score: float
    pairs: list[tuple[str, str, float]] = field(default_factory=list)  # (query part, listed part, sim)
    query_leftover: list[str] = field(default_factory=list)
    list_leftover: list[str] = field(default_factory=list)
    # the weight of each entry of pairs, query_leftover, list_leftover (in that order) in the denominator
    weights: list[float] = field(default_factory=list)

    def explain(self) -> list[dict]:
        """Every part of both names: the pair (or the part left over), its similarity, its weight in the
        score's denominator and its contribution to the numerator (score = sum(contribution) / sum(weight))."""
        weights = self.weights or [1.0] * (len(self.pairs) + len(self.query_leftover) + len(self.list_leftover))
        out = []
        for (q, m, s), w in zip(self.pairs, weights):
            out.append({"query": q, "matched": m, "score": round(s, 4), "weight": round(w, 4),
                        "contribution": round(w * s ** SIM_EXPONENT, 4)})
        rest = weights[len(self.pairs):]
        for q, w in zip(self.query_leftover, rest):
            out.append({"query": q, "matched": None, "score": 0.0, "weight": round(w, 4), "contribution": 0.0})
        rest = rest[len(self.query_leftover):]
        for m, w in zip(self.list_leftover, rest):
            out.append({"query": None, "matched": m, "score": 0.0, "weight": round(w, 4), "contribution": 0.0})
        return out


def units(tokens: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """Single tokens and adjacent pairs written together: (text, first index, last index)."""
    out = [(t, i, i) for i, t in enumerate(tokens)]
    out += [(tokens[i] + tokens[i + 1], i, i + 1) for i in range(len(tokens) - 1)]
    return out


# listed unit text -> [(query first index, query last index, query unit text, similarity)]
Reverse = dict[str, list[tuple[int, int, str, float]]]


def reverse_matches(q_tokens: tuple[str, ...], matches: dict[str, dict[str, float]]) -> Reverse:
    """Invert {query unit: {listed unit: sim}} so a listed name is aligned by looking up its own units."""
    rev: Reverse = {}
    for text, i, j in units(q_tokens):
        for listed, sim in matches.get(text, {}).items():
            rev.setdefault(listed, []).append((i, j, text, sim))
    return rev


def align(q_tokens: tuple[str, ...], a_tokens: tuple[str, ...], rev: Reverse, initials: bool = False,
          weight=_uniform, person: bool = True) -> Alignment:
    """Greedy best-first alignment of query units with the listed name's units (single tokens and adjacent
    pairs written together); `rev` says which query units may align with a listed unit, and how well.
    `initials` (broad search): parts left over that are one letter align with a left-over part starting
    with it. `person`: a part left over between two aligned parts is a middle name (organizations have
    none: "SHARQ WHITE CEMENT" is not "SHARQ CEMENT")."""
    if not q_tokens or not a_tokens:
        return Alignment(0.0, [], list(q_tokens), list(a_tokens))
    candidates = []
    get = rev.get
    n = len(a_tokens)
    for ai in range(n):
        at = a_tokens[ai]
        found = get(at)
        if found:
            for qi, qj, qt, s in found:
                candidates.append((s, len(qt) + len(at), qi, qj, ai, ai, qt, at))
        if ai + 1 < n:
            at = at + a_tokens[ai + 1]
            found = get(at)
            if found:
                for qi, qj, qt, s in found:
                    candidates.append((s, len(qt) + len(at), qi, qj, ai, ai + 1, qt, at))
    if not candidates and not initials:
        return Alignment(0.0, [], list(q_tokens), list(a_tokens))
    # best similarity first; ties: parts one by one before parts written together (an analyst reads
    # "john" / "john", "smith" / "smith", not "johnsmith"), then more characters covered, then the nearer
    # places (a part a name holds twice pairs with the same place in the other: "Ibrahim Sabawi IBRAHIM" /
    # "Yasir Sabawi IBRAHIM" leaves the first parts apart), then leftmost
    candidates.sort(key=lambda c: (-c[0], (c[3] != c[2]) + (c[5] != c[4]), -c[1], abs(c[2] - c[4]), c[2], c[4]))
    best, blocked = _greedy(candidates, q_tokens, a_tokens, initials, weight, person)
    if blocked and best.score < 1.0:
        # Parts written together taken first, ties otherwise as above, when that scores better: one by one,
        # "el" / "el" would leave "Alshafee" against "El Shafee" and "El Sheikh" against "Elsheikh" unpaired
        # (0.23; 0.93 together), and "rwdy" / "Rudi" would weigh apart (0.75) what "rwdy slywh" / "Rudi
        # Slaiwah" written together scores 0.9. Only when a pair of parts written together lost a tie to
        # a pair that took one of its parts: otherwise the other order pairs the same parts.
        candidates.sort(key=lambda c: (-c[0], -((c[3] != c[2]) + (c[5] != c[4])), -c[1], c[2], c[4]))
        joined, _ = _greedy(candidates, q_tokens, a_tokens, initials, weight, person)
        if joined.score > best.score:
            best = joined
    return best


def _greedy(candidates: list, q_tokens: tuple[str, ...], a_tokens: tuple[str, ...], initials: bool, weight,
            person: bool) -> tuple[Alignment, bool]:
    """`align`'s pairing, in the order of `candidates`, and the score of what it paired and left over; and
    whether a candidate pair of parts written together was passed over for a pair as similar (a tie)."""
    blocked = False
    n = len(a_tokens)
    q_used: list = [False] * len(q_tokens)  # False, or the similarity of the pair that took the part
    a_used: list = [False] * n
    pairs = []
    weights = []
    matched = 0.0
    n_parts = 0  # aligned parts: a pair of two parts written together against two counts two
    for s, length, qi, qj, ai, aj, qt, at in candidates:
        if q_used[qi] or q_used[qj] or a_used[ai] or a_used[aj]:
            if not blocked and (qi != qj or ai != aj):
                blocked = s in (q_used[qi], q_used[qj], a_used[ai], a_used[aj])
            continue
        q_used[qi] = q_used[qj] = s
        a_used[ai] = a_used[aj] = s
        pairs.append((qt, at, s))
        # a pair weighs what the listed part weighs (its rarity among the listed names); two parts written
        # together against one ("Abdulrahman" / "Abdul Rahman") weigh as one, two against two as two
        if aj == ai:
            w = weight(at)
        elif qj == qi:
            w = max(weight(a_tokens[ai]), weight(a_tokens[aj]))
        else:
            w = weight(a_tokens[ai]) + weight(a_tokens[aj])
            n_parts += 1
        weights.append(w)
        matched += w * s ** SIM_EXPONENT
    if initials:
        for qi, qt in enumerate(q_tokens):
            if q_used[qi]:
                continue
            for ai, at in enumerate(a_tokens):
                if not a_used[ai] and (len(qt) == 1 or len(at) == 1) and qt[0] == at[0] and qt != at:
                    q_used[qi] = a_used[ai] = True
                    pairs.append((qt, at, INITIAL_SIM))
                    w = min(weight(qt), weight(at))
                    weights.append(w)
                    matched += w * INITIAL_SIM ** SIM_EXPONENT
                    break
    q_left = [t for t, used in zip(q_tokens, q_used) if not used]
    a_left = [t for t, used in zip(a_tokens, a_used) if not used]
    q_mid = _between(q_used) if person else ()
    q_here, a_here = _explained_here(q_tokens, q_used, a_tokens, a_used) if person else ((), ())
    for i, t in enumerate(q_tokens):
        if not q_used[i]:
            share = _share_beside(q_tokens, q_used, q_mid, i) if person else None
            weights.append(share * weight(t) if share is not None else
                           _leftover_weight(t, weight(t), QUERY_LEFTOVER_WEIGHT, i in q_mid, i in q_here))
    # An unexplained listed part weighs at least what an aligned part weighs on average: a common third
    # part ("Zhang Wei" against "Zhang Wei Ming") still keeps a two-part query below 0.80.
    n_parts += len(pairs)
    floor = sum(weights[:len(pairs)]) / n_parts if pairs else 0.0
    a_mid = _between(a_used) if person else ()
    # an organization named whole, in two parts or more, inside a longer listed name ("BANK SADERAT" in
    # "BANK SADERAT IRAN"): the listed name's other words describe it
    side = ORG_CONTAINED_WEIGHT if not person and not q_left and n_parts >= 2 else LIST_LEFTOVER_WEIGHT
    # a person named whole, in three parts or more (not counting particles and initials) and in the listed
    # order, inside a longer listed name ("Karim Yusuf Haddad" in "Karim Yusuf Haddad Al-Nouri"): the listed
    # parts before or after it are more of the same person's names (a nasab, a second family name)
    outer = ()
    if (person and not q_left and sum(not explained_leftover(t) for t in q_tokens) >= PERSON_CONTAINED_MIN_PARTS
            and _in_order(q_tokens, a_tokens, pairs)):
        aligned = [i for i, u in enumerate(a_used) if u]
        outer = {i for i in range(n) if i < aligned[0] or i > aligned[-1]}
    for i, t in enumerate(a_tokens):
        if not a_used[i]:
            w = weight(t)
            share = _share_beside(a_tokens, a_used, a_mid, i) if person else None
            weights.append(share * max(w, floor) if share is not None else
                           _leftover_weight(t, w if w > floor else floor,
                                            PERSON_CONTAINED_WEIGHT if i in outer else side, i in a_mid,
                                            i in a_here))
    denominator = sum(weights)
    score = matched / denominator if denominator else 0.0
    if len(q_tokens) == 1 and n == 1 and pairs:
        # one part against one: the names are as near as their parts ("DOWNY" / "DONY" 0.8, one letter of
        # five), not less, as a near part among others is
        score = pairs[0][2]
    if (person and not q_used[-1] and not a_used[-1] and len(q_tokens[-1]) > 1 and len(a_tokens[-1]) > 1
            and not explained_leftover(q_tokens[-1])):
        # both family names (the last parts, once "LAST, First" is reordered) left over: another family,
        # whatever the given names ("ABD ALLAH MOHAMED RAGAB ABDEL Johnson" is not "... ABDEL RAHMAN")
        score = min(score, FAMILY_MISMATCH_CAP)
    if (person and not q_used[0] and not a_used[0] and 0 not in q_here and 0 not in a_here
            and len(q_tokens[0]) > 1 and len(a_tokens[0]) > 1 and not explained_leftover(q_tokens[0])
            and not explained_leftover(a_tokens[0])):
        # both first (given) names left over: siblings share the rest of a chain of names ("Abdallah Hadi
        # Fayhan AL-ANIZI" / "Muhammad Hadi Fayhan AL-ANIZI" are brothers): at most what a family
        # mismatch scores (engine 2.5.0)
        score = min(score, FAMILY_MISMATCH_CAP)
    if any(not t.isalpha() for t in q_left) and any(not t.isalpha() for t in a_left):
        # different numbers: another unit, vessel or company ("99TH LIGHT INFANTRY DIVISION" / "77TH ...")
        score = min(score, FAMILY_MISMATCH_CAP)
    return Alignment(score, pairs, q_left, a_left, weights), blocked


def _share_beside(tokens: tuple[str, ...], used: list, mid, i: int) -> float | None:
    """The share of its weight part `i` of a person's name, left over, weighs by the part beside it: nothing
    for a particle whose name is left over too (`_introduces`), half a middle name for one syllable of a
    two-syllable given name (`_given_syllable`); None when neither applies."""
    if _introduces(tokens, used, i):
        return 0.0
    if i in mid and _given_syllable(tokens, mid, i):
        return 0.5 * MIDDLE_LEFTOVER_WEIGHT
    return None


def _given_syllable(tokens: tuple[str, ...], mid, i: int) -> bool:
    """Part `i`, in the middle of a name (`mid`: the places that are), is a romanized Chinese or Korean
    syllable beside another, and the family name (the name's first or last part) is one too: the two are
    one two-syllable given name ("Kelvin Hok Lai KONG" / "Kelvin KONG"), and weigh one middle name between
    them (engine 2.5.0). One syllable alone is half a given name, never a middle name ("ZHANG Ming Wei" is
    not "Zhang Wei")."""
    return (_syllable(tokens[i]) and any(j in mid and _syllable(tokens[j]) for j in (i - 1, i + 1))
            and (_syllable(tokens[0]) or _syllable(tokens[-1])))


def _syllable(token: str) -> bool:
    return len(token) > 1 and token not in PARTICLES and cjk_syllable(token)


def _introduces(tokens: tuple[str, ...], used: list, i: int) -> bool:
    """Part `i` of a person's name, left over, is a particle that belongs to the next part, left over too:
    "Abd al-Karim", "Abdul Ghani", "bin Mohammed", "al-Hasan" are one name each, and weigh what that name weighs (before
    engine 2.5.0 each particle added a fifth of a part: "Hasan Abd-al-Karim NASRALLAH" / "Hasan NASRALLAH"
    scored 0.71 where a middle name of one part scores 0.83)."""
    return i + 1 < len(tokens) and not used[i + 1] and _particle(tokens[i])


def _in_order(q_tokens: tuple[str, ...], a_tokens: tuple[str, ...], pairs) -> bool:
    """The aligned parts stand in the same order in both names."""
    qpos = _positions(q_tokens)
    apos = _positions(a_tokens)
    order = sorted((qpos.get(q, -1), apos.get(a, -1)) for q, a, _ in pairs)
    listed = [a for _, a in order]
    return all(x < y for x, y in zip(listed, listed[1:]))


def _positions(tokens: tuple[str, ...]) -> dict[str, int]:
    """The position of each unit (a part, or two adjacent parts written together) of a name."""
    out: dict[str, int] = {}
    for text, i, _ in units(tokens):
        out.setdefault(text, i)
    return out


def _between(used: list[bool]) -> set[int]:
    """Positions of the parts left over that lie between two aligned parts (a middle name)."""
    aligned = [i for i, u in enumerate(used) if u]
    if len(aligned) < 2:
        return set()
    return {i for i in range(aligned[0] + 1, aligned[-1]) if not used[i]}


def least_query_leftover(q_tokens: tuple[str, ...], k: int) -> float:
    """The least share of its weight query part `k` left over can weigh: nothing when it is a particle that
    may belong to the next part, less when explained, when it may be a middle name (neither the query's
    first part nor its last; a chain name there weighs as explained; a romanized syllable beside another
    half a middle name), or when its place may explain it (see `explained_by_place`). The candidate bounds
    (engine._candidates, engine._viable) must not assume more."""
    token, last = q_tokens[k], len(q_tokens) - 1
    if k < last and _particle(token):
        return 0.0  # it may belong to the next part, left over too (`_introduces`)
    if 0 < k < last and _given_syllable(q_tokens, range(1, last), k):
        return 0.5 * MIDDLE_LEFTOVER_WEIGHT  # half of a two-syllable given name, its places in the middle
    return _leftover_weight(token, 1.0, QUERY_LEFTOVER_WEIGHT, 0 < k < last, explained_by_place(q_tokens, k))


def _particle(token: str) -> bool:
    """A particle or "Abd"/"Abdul" that belongs to the part after it (`_introduces`)."""
    return (token in PARTICLES or token in THEOPHORIC_PREFIXES) and len(token) > 1


def explained_by_place(tokens: tuple[str, ...], i: int) -> bool:
    """Whether part `i` of a person's name may be one a name goes without because of where it stands:
    "Muhammad" or a lineage title first of three parts or more ("Muhammad Wael Karimi" / "Wael Karimi"), a
    father's name after "bin", "ben", "ould"... after a name ("Mehdi Ben Salah Karoun"; a name's first part
    is a given name: "Ben Ray Lujan" is not the son of Ray), or a father's or grandfather's name ending a
    chain of given names, after two parts at least ("Khalil Ibrahim MOHAMED", "Allah Dad Tayeb Wali
    MUHAMMAD": see `CHAIN_NAMES`). `align` also asks what the other name does."""
    if i == 0:
        return len(tokens) > 2 and tokens[0] in PREFIX_NAMES
    if i < 2:
        return False
    if tokens[i - 1] in NASAB and tokens[i] not in NASAB:
        return True
    return all(_chain_name(tokens, j) for j in range(i, len(tokens)))


def _chain_name(tokens: tuple[str, ...], j: int) -> bool:
    """Part `j` is (part of) a given name that may end a chain of them (`CHAIN_NAMES`)."""
    t = tokens[j]
    return (t in CHAIN_NAMES or (len(t) >= 7 and t.endswith(THEOPHORIC_SUFFIXES))
            or (t in THEOPHORIC_PREFIXES and j + 1 < len(tokens)) or tokens[j - 1] in THEOPHORIC_PREFIXES)


def _explained_here(q_tokens: tuple[str, ...], q_used: list, a_tokens: tuple[str, ...],
                    a_used: list) -> tuple[set[int], set[int]]:
    """The parts left over of each name that their place explains (`explained_by_place`), given the other
    name: a leading "Muhammad" only while the other name's first part aligned (against another given name
    left over, "Muhammad Naeem" / "Umair Naeem", it is a name like any other); a father's name only when the
    other name has none left over (two fathers' names left over are two fathers)."""
    def here(tokens, used):
        out = {0} if not used[0] and explained_by_place(tokens, 0) else set()
        if not NASAB.isdisjoint(tokens) or (len(tokens) > 2 and not used[-1] and _chain_name(tokens, len(tokens) - 1)):
            # most names hold no "bin" and end with no given name: no call per part
            out.update(i for i in range(2, len(tokens)) if not used[i] and explained_by_place(tokens, i))
        return out
    q_here, a_here = here(q_tokens, q_used), here(a_tokens, a_used)
    if not a_used[0]:
        q_here.discard(0)
    if not q_used[0]:
        a_here.discard(0)
    if any(i > 0 for i in q_here) and any(i > 0 for i in a_here):
        q_here = {i for i in q_here if i == 0}
        a_here = {i for i in a_here if i == 0}
    return q_here, a_here


def _leftover_weight(token: str, w: float, side: float, middle: bool, explained: bool = False) -> float:
    """`explained`: the part is explained by its place (a leading "Muhammad", a father's name: `align`)."""
    if explained or explained_leftover(token):
        return EXPLAINED_LEFTOVER_WEIGHT * w
    if middle and token in CHAIN_NAMES and len(token) >= MIDDLE_MIN_LEN:
        return EXPLAINED_LEFTOVER_WEIGHT * w  # a father's name in a chain of given names ("Shafi Sultan MOHAMMED")
    if middle and len(token) >= MIDDLE_MIN_LEN and not cjk_syllable(token):
        return min(side, MIDDLE_LEFTOVER_WEIGHT) * w
    return side * w


# One romanized Chinese (pinyin) or Korean syllable: such a part left over in the middle is half of a
# two-syllable given name ("ZHANG Ming Wei" is not "Zhang Wei"), never a middle name.
# pinyin, and Wade-Giles as Taiwan writes it ("Chien", "Hsing", "Tsai")
_PINYIN = re.compile(r"(zh|ch|sh|hs|ts|tz|[bpmfdtnlgkhjqxrzcsyw])?(iang|iong|iung|uang|ang|eng|ing|ong|ung|ian|ien|"
                     r"iao|ieh|uai|uan|uei|ueh|ai|ei|ao|ou|an|en|in|un|ia|ie|ih|iu|ua|uo|ui|ue|ve|er|a|o|e|i|u|v)")
_HANGUL = re.compile(r"(kk|tt|pp|ss|jj|ch|ts|[kgndtrlmbpsjhyw])?[wy]?(ae|eo|eu|oe|ui|a|e|i|o|u)(ng|[kntlmp])?")


@lru_cache(maxsize=16_384)
def cjk_syllable(token: str) -> bool:
    return bool(_PINYIN.fullmatch(token) or _HANGUL.fullmatch(token))


def name_score(q_tokens: Iterable[str], a_tokens: Iterable[str], search_type: str = "medium_search",
               weight=_uniform, person: bool = True) -> Alignment:
    """Align two token sequences computing similarities directly (no index); used by compare-pairs."""
    q_tokens, a_tokens = tuple(q_tokens), tuple(a_tokens)
    listed = [u for u, _, _ in units(a_tokens)]
    matches = {}
    for text, _, _ in units(q_tokens):
        found = {}
        for other in listed:
            s = part_similarity(text, other, search_type)
            if s > 0.0:
                found[other] = s
        matches[text] = found
    return align(q_tokens, a_tokens, reverse_matches(q_tokens, matches), search_type == "broad_search", weight,
                 person)


# --- qualifiers ----------------------------------------------------------------------------------------

DOB_BONUS_EXACT = 0.05      # full date equal
DOB_BONUS_YEAR = 0.02       # equal at the coarser precision (year, or year-month)
DOB_PENALTY_DAY = 0.02      # same year, different month/day ("wrong birth day")
DOB_PENALTY_NEAR = 0.10     # one year apart (broad: tolerated, counted as DOB_PENALTY_DAY)
DOB_PENALTY_CONFLICT = 0.25
COUNTRY_BONUS = 0.0         # sharing a nationality is weak evidence; only a conflict counts
COUNTRY_PENALTY = 0.08
GENDER_PENALTY = 0.10


@dataclass(frozen=True)
class DateValue:
    year: int
    month: int | None = None
    day: int | None = None
    year_to: int | None = None  # a range of years "1973..1974"

    @classmethod
    def parse(cls, iso: str) -> "DateValue | None":
        try:
            if ".." in iso:
                a, b = iso.split("..", 1)
                return cls(int(a[:4]), None, None, int(b[:4]))
            parts = iso.split("-")
            return cls(int(parts[0]), int(parts[1]) if len(parts) > 1 else None,
                       int(parts[2]) if len(parts) > 2 else None)
        except (ValueError, IndexError):
            return None


def compare_dates(q: DateValue, r: DateValue) -> tuple[str, int]:
    """("exact" | "year" | "day" | "near" | "conflict", year distance)."""
    if r.year_to is not None:
        lo, hi = r.year, r.year_to
        if lo <= q.year <= hi:
            return "year", 0
        dist = lo - q.year if q.year < lo else q.year - hi
        return ("near" if dist == 1 else "conflict"), dist
    dist = abs(q.year - r.year)
    if dist:
        return ("near" if dist == 1 else "conflict"), dist
    if q.month is None or r.month is None:
        return "year", 0
    if q.month != r.month:
        return "day", 0
    if q.day is None or r.day is None:
        return "year", 0
    return ("exact" if q.day == r.day else "day"), 0


DOB_RANK = {"exact": 0, "year": 1, "day": 2, "near": 3, "conflict": 4}

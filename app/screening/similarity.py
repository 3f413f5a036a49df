"""The similarity of two name parts (pure Python), and the keys the index files parts under to find them.

A pair's similarity comes from the edit distance (optimal string alignment: a swap of two letters is one edit)
with floors for parts that sound alike (Metaphone key and first letter equal) and for one name written two
ways (the spelling, abjad and romanized-syllable keys). Which pairs may align at all is the search type's
business:

- narrow: identical parts only;
- medium: identical, one edit, or same sound;
- broad: up to two edits, same sound, and an initial against a name starting with it.
"""
from __future__ import annotations

import itertools
import re
from functools import lru_cache

import jellyfish
from rapidfuzz.distance import OSA, Levenshtein

from app.screening.constants import (ABJAD_ARTICLE_SIM, ABJAD_LINKS, ABJAD_SHORT_SIM, ABJAD_SIM, ARTICLES, CHAIN_NAMES,
                                     CJK_SPELLING_SIM, PARTICLES, PREFIX_NAMES,
                                     DOUBLED_LETTER_COST, INITIAL_SIM, INNER_TYPO_MIN_LEN, MIN_PART_LEN_FOR_EDIT,
                                     MATRES_SIM, NICKNAME_SIM, ROMANIZATION_SIM,
                                     PHONETIC_FLOOR, PHONETIC_MIN_LEN, PHONETIC_STEP, SHORT_SUBSTITUTION_COST,
                                     SHORT_TOKEN_LEN, SHORT_VOWEL_SIM, SPELLING_EDIT_MIN_LEN, SPELLING_EDIT_SIM,
                                     SPELLING_MIN_LEN, SPELLING_SIM, TRANSPOSITION_DISCOUNT, VOWEL_MIN_CONSONANTS,
                                     VOWEL_MIN_LEN, VOWELLED_SIM)
from app.screening.given_names import short_form_pairs
from app.screening.normalize import undouble
from app.screening.wade_giles import chinese_kept, other_romanizations, same_chinese_name


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
        vowelless = _vowelless(token)
        if not vowelless:  # (an abjad's part is no Latin nickname or romanization of Cyrillic)
            # a short form and its full name meet under the full name's key ("=rubirt": Bob, Robert; 3.0.0)
            keys.extend("=" + k for k in nickname_keys(spelling_key(token)))
            # romanizations of Cyrillic: the index files a listed part under its English/BGN reading, the
            # lists' system; a query part looks up its readings by every system (3.0.0)
            if query:
                keys.extend("^" + k for k in romanization_keys(token))
            else:
                k = romanization_index_key(token)
                if k:
                    keys.append("^" + k)
        key = abjad_key(token)
        rest = _article_less(token) if vowelless else ""
        if query:  # seek the other kind; short keys hold too many parts at 1M records to be worth it
            if len(key) >= (2 if vowelless else 3) or (vowelless and key and len(token) == 2):
                # a part of two letters with one consonant: "ly" / "Ali" (engine 3.0.0; longer ones, "lwy",
                # would read every short name with an "l" at 1M names)
                keys.append(("&" if vowelless else "%") + key)
            if rest:
                keys.append("&" + abjad_key(rest))
            if vowelless:
                # engine 3.0.0: the article joined to a part of two consonants ("ldwry" / "al-Duri"), and a
                # final ة or ه that writes the final vowel ("smyrh" / "Samira"; 3.1.0: also after two letters,
                # "smh" / "Osama"): `_matres` compares them
                if token[0] == "l" and len(token) >= 4 and not rest and len(abjad_key(token[1:])) >= 2:
                    keys.append("&" + abjad_key(token[1:]))
                if token[-1] == "h" and len(token) >= 3 and len(abjad_key(token[:-1])) >= 2:
                    keys.append("&" + abjad_key(token[:-1]))
                # engine 3.1.0: the article assimilated to a sun letter ("nwrldyn" / "Nuruddin"), and the part
                # with its long vowels' letters as consonant slots ("zyz" / "Aziz", "ywb" / "Ayyub": `skeleton`)
                sun = assimilated(token)
                if sun and len(abjad_key(sun)) >= 3:
                    keys.append("&" + abjad_key(sun))
                # engine 3.2.0: its consonants as the French, Maghrebi, Egyptian, Persian and Turkish romanizations
                # write them ("fdl" / "Fazl", "blqsm" / "Belgacem", "shryf" / "Cherif": `abjad_readings`), the
                # article left out too ("lshryf" / "Cherif")
                for part in (token, rest) if rest else (token,):
                    keys.extend("&" + k for k in abjad_readings(part) if len(k) >= 3 and "&" + k not in keys)
                # engine 3.2.0: a link of a nasab meets the words Latin writes for it ("wld": "Ould", filed "&ld")
                for latin in sorted(ABJAD_LINKS.get(token, ())):
                    if "&" + abjad_key(latin) not in keys:
                        keys.append("&" + abjad_key(latin))
        else:
            if len(key) >= 2 or len(token) <= 4:
                keys.append(("%" if vowelless else "&") + key)
            if rest:
                keys.append("%" + abjad_key(rest))
            if not vowelless and "c" in token and _SOFT_C.search(token):
                soft = abjad_key(_SOFT_C.sub("s", token))
                if soft != key and len(soft) >= 2:
                    keys.append("&" + soft)  # a soft "c" is س (engine 3.0.0)
        if query == vowelless:  # an abjad query part seeks, a Latin listed part is filed, under `skeleton` (3.1.0)
            skel = skeleton(token)
            if len(skel) >= 2 and skel != key:
                keys.append("$" + skel)
    return tuple(keys)


def part_similarity(a: str, b: str, search_type: str = "medium_search") -> float:
    """Similarity of two name parts in 0..1, or 0.0 when the search type does not let them align."""
    if a == b:
        return 1.0
    if search_type == "narrow_search":
        return 0.0
    alpha_a, ua, vowelless_a, sa, cjk_a, abjad_a, chinese_a, kept_a, full_a = _features(a)
    alpha_b, ub, vowelless_b, sb, cjk_b, abjad_b, chinese_b, kept_b, full_b = _features(b)
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
        if b in ABJAD_LINKS.get(a, ()) or a in ABJAD_LINKS.get(b, ()):
            return SPELLING_SIM  # a link of a nasab as the script writes it ("bn" / "ben", "wld" / "Ould"; 3.2.0)
        if ka == kb and (len(ka) >= 2 or longest <= 4):   # "ly" / "ali": one consonant, short names
            matres = _matres(a, b, vowelless_a)
            sim = max(sim, _matres_sim(a if vowelless_a else b) if matres else
                      ABJAD_SIM if len(ka) >= 3 or _maqsura(a, b, vowelless_a) else ABJAD_SHORT_SIM)
        elif _matres(a, b, vowelless_a):
            sim = max(sim, _matres_sim(a if vowelless_a else b))
        elif _maqsura(a, b, vowelless_a):
            sim = max(sim, ABJAD_SIM)
        else:  # the article joined to the part without vowels, left out of the other ("ltkryty" / "Tikriti")
            rest = _article_less(a) or _article_less(b)
            if rest and abjad_key(rest) == (kb if vowelless_a else ka):
                sim = max(sim, ABJAD_ARTICLE_SIM)
            else:
                v, w = (a, b) if vowelless_a else (b, a)
                if len(v) >= 4 and v[0] == "l" and w[0] != "l" and _matres(v[1:], w, True):
                    sim = max(sim, ABJAD_ARTICLE_SIM)  # "ldwry" / "Duri": the article and a long vowel (3.0.0)
                else:
                    sun = assimilated(v)  # "nwrldyn" / "Nuruddin": the article before a sun letter (3.1.0)
                    if sun and (abjad_key(sun) == abjad_key(w) or _matres(sun, w, True)):
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
    if vowelless_a or vowelless_b or sim >= SPELLING_SIM:
        return sim
    # Wade-Giles and pinyin (`same_chinese_name`), read only for two runs of syllables that keep the same letters
    if sim < CJK_SPELLING_SIM and chinese_a is not None and chinese_a == chinese_b and \
            (b in other_romanizations(a) or a in other_romanizations(b)):
        sim = CJK_SPELLING_SIM  # Wade-Giles and pinyin ("Hsiaoping"/"Xiaoping", "Tsai"/"Cai"; engine 3.0.0)
    # the Cyrillic readings only of two parts that keep the same letters in them (`kept_letters`)
    if sim < ROMANIZATION_SIM and (kept_a[0] in kept_b or (len(kept_a) > 1 and kept_a[1] in kept_b)) \
            and same_romanization(a, b):
        sim = ROMANIZATION_SIM  # one Cyrillic name by two romanizations ("Gorbatschow"/"Gorbachev"; 3.0.0)
    if sim < NICKNAME_SIM and (sb in full_a or sa in full_b):
        sim = NICKNAME_SIM  # a short form of the other ("Bob"/"Robert", "Misha"/"Mikhail"; engine 3.0.0)
    return sim


def _matres(a: str, b: str, vowelless_a: bool) -> bool:
    """A part without vowels (an abjad's letters) is the other part as the script writes it: every consonant
    in its place, the long vowels written with their letters (و as "w" for u/o, ي as "y" for i/e, ا as "a")
    and the short vowels left out (engine 3.0.0): "rwdy"/"Rudi", "sbwy"/"Sabawi", "ysr"/"Yasir",
    "dyb"/"Adib", three letters at least; a final "h" (ة, ه) the final vowel ("shhth"/"Shihata"). The
    consonant key alone ("rd", "sb") is too short to say as much."""
    v, w = (a, b) if vowelless_a else (b, a)
    if len(v) < 3:
        return False
    v = _matres_letters(v)
    if _matres_walk(v, _abjad_spelling(w)):
        return True
    if "c" not in w:
        return False
    soft = _SOFT_C.sub("s", w)  # French and Spanish "ci", "ce": س ("Lounici" / "lwnysy")
    return soft != w and _matres_walk(v, _abjad_spelling(soft))


_SOFT_C = re.compile(r"c(?=[eiy])")


def _maqsura(a: str, b: str, vowelless_a: bool) -> bool:
    """The final ی or ي of a part without vowels, of four letters or more and after a consonant or a "y", is an alef
    maqsura (ى), as Persian and Egyptian writing put it, where the other part ends in "a", the rest the same
    (`_matres`): مرتضی "mrtdy" / "Morteza", یحیی "yhyy" / "Yahya" (engine 3.5.0; `vowelling` reads a short word's
    so)."""
    v, w = (a, b) if vowelless_a else (b, a)
    return len(v) >= 4 and v[-1] == "y" and v[-2] != "w" and w[-1:] == "a" and _matres(v[:-1], w[:-1], True)


@lru_cache(maxsize=16_384)
def _matres_letters(v: str) -> str:
    """The letters of a part without vowels as `_matres_walk` reads them (`_MATRES`; cached: a listed or query
    part meets many others)."""
    # ج as `_abjad_spelling` reads it; "dh", "th", "sh", "gh" and "q" kept, for `_READINGS`: "dh" is ذ or ظ, or
    # د before ه ("zdh", زاده: "Zadeh")
    # "Allah" (الله): the script writes the lam of the article and that of "lah", Latin two l's too, which
    # `_abjad_spelling` writes once ("fydllh", فیض الله / "Faizullah": "fyzulah"; engine 3.4.0)
    return v.replace("dj", "j").translate(_MATRES).replace("llh", "lh")


def _matres_sim(v: str) -> float:
    """MATRES_SIM when the part without vowels writes a long vowel that the other has (a "w", "y" or "a"
    after its first letter: "rwdy" / "Rudi"), ABJAD_SIM when its consonants alone agree ("hsn" / "Hasan")."""
    return MATRES_SIM if any(ch in "wya" for ch in v[1:]) else ABJAD_SIM


# the abjad part's letters as `_abjad_spelling` folds a romanization's (w -> v, y -> i), doubled letters kept
# ("shhth" is ش ح ا ت ه: "sh" and "h")
_MATRES = str.maketrans({"w": "v", "y": "i", "e": "i", "o": "u"})

# How romanizations other than the English one write the consonants of Arabic and Persian names (engine 3.2.0):
# {the letters of the part without vowels (anyascii's transliteration of the script): the Latin letters a
# romanization writes for them, folded as `_abjad_spelling` folds them}. Each is the letter's usual
# pronunciation in a language or a dialect, and the transcription of that language's names:
# - ق (q): "k" (q folded); "g" where Maghrebi, Gulf, Libyan, Sudanese and Upper Egyptian Arabic say [g]
#   ("Belgacem", "Gaddafi", "Guerfi"); "gh" in Persian, which says ق and غ alike ("Ghasem", "Ghorbani");
# - غ (gh): "q" (folded "k") and "g" in Persian and Turkish usage ("Qolam" / "Gholam", "Golam");
# - ج (j): "g" in Egyptian usage ("Gamal", "Ragab", "Naguib");
# - ش (sh): "ch" in French usage, the Maghreb's and Lebanon's ("Cherif", "Achour", "Bouchaib");
# - خ (kh): "ch" in German usage ("Chalid", "Chamenei", "Chomeini");
# - ث (th): "s" in Persian, Urdu and Turkish usage ("Osman", "Sanaullah", "Kasir"), "t" in Egyptian, Levantine
#   and Maghrebi usage ("Otman", "Haditha" / "Haditha" written "Hadita");
# - ذ, ظ (dh): "z" in Persian, Urdu, Turkish and Egyptian usage ("Nazir", "Hafez"), "d" where Maghrebi and
#   Levantine speech says them as د or ض ("Hafed", "Nadir");
# - ض (d, as anyascii writes د): "z" in Persian, Urdu and Turkish usage ("Ramazan", "Fazl", "Reza", "Zia");
# - ב, כ, פ (v, kh, f): unpointed Hebrew writes b and v, k and kh, p and f with one letter each (the dagesh that tells
#   them apart is left out), and anyascii reads the second: "b", "k", "p" too ("Avraham" / "Abraham", "Kohen").
# The letters as written also compare, so "dh" is also د then ه ("zdh" / "Zadeh").
_READINGS = {
    "q": (("q", "k"), ("q", "gh"), ("q", "g")),
    "g": (("gh", "k"), ("gh", "g")),
    "k": (("kh", "ch"), ("kh", "k")),
    "v": (("v", "b"),),
    "f": (("f", "p"),),
    "j": (("j", "g"),),
    "s": (("sh", "ch"),),
    "t": (("th", "s"), ("th", "t")),
    "d": (("dh", "z"), ("dh", "d"), ("d", "z")),
}


@lru_cache(maxsize=65_536)
def _matres_walk(v: str, w: str) -> bool:
    i = j = 0
    stack = [(0, 0)]
    seen = set()
    while stack:
        i, j = stack.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(v) and j == len(w):
            return True
        if i == len(v) - 1 and v[i] == "h" and w[j:] in ("a", "ah", "ih", "i"):
            return True  # the final ة or ه (ta marbuta) of "shhth" is the "a" of "Shihata"
        if j < len(w) and w[j] in "aiu":
            stack.append((i, j + 1))  # a short vowel, unwritten
        if i < len(v) and j < len(w):
            if v[i] == w[j] or (v[i] == "v" and w[j] == "u"):
                stack.append((i + 1, j + 1))
            for letters, latin in _READINGS.get(v[i], ()):
                if v.startswith(letters, i) and w.startswith(latin, j):
                    stack.append((i + len(letters), j + len(latin)))
    return False


MAX_READINGS = 8


@lru_cache(maxsize=16_384)
def abjad_readings(token: str) -> tuple[str, ...]:
    """The consonant keys of a part without vowels as the other romanizations of `_READINGS` write it ("fdl",
    فضل: "fzl", Fazl; "blqsm", بلقاسم: "blgsm", Belgacem), those that differ from its own abjad key: the letters
    read one way, then two ways at once, at most MAX_READINGS keys. What a query part looks up (engine 3.2.0)."""
    own = abjad_key(token)
    places = []  # (position, [(letters, latin)])
    i = 0
    while i < len(token):
        # each reading followed by a short vowel, as the Latin name writes one where the script does not: "sh" read
        # "ch" before "r" is not the "chr" of "Christ" ("shryf": "charyf", Cherif), and "dh" read as د then ه
        # ("zdh", زاده) is not read "z" again
        options = [(letters, latin + "a") for letters, latin in _READINGS.get(token[i], ())
                   if token.startswith(letters, i)]
        if token.startswith("dh", i):
            options.append(("dh", "dah"))
        if options:
            places.append((i, options))
            i += max(len(letters) for letters, _ in options)
        else:
            i += 1
    out: list[str] = []

    def add(text: str) -> None:
        k = abjad_key(text)
        if k != own and k not in out and len(out) < MAX_READINGS:
            out.append(k)

    singles = [(pos, letters, latin) for pos, options in places for letters, latin in options]
    for pos, letters, latin in singles:
        add(token[:pos] + latin + token[pos + len(letters):])
    for (p1, l1, r1), (p2, l2, r2) in itertools.combinations(singles, 2):
        if p1 + len(l1) <= p2:
            add(token[:p1] + r1 + token[p1 + len(l1):p2] + r2 + token[p2 + len(l2):])
    return tuple(out)


def part_rule(a: str, b: str, sim: float, transliterated: bool = False) -> str:
    """Which convention aligned two parts at `sim` (`part_similarity`), in the words of the explanation:
    "identical" (or "transliterated" when the query was written in another script), "initial of",
    "nickname of", "romanization", "Wade-Giles / pinyin", "without short vowels" (an abjad), "spelling",
    "doubled letter", "same sound" or "typo"."""
    if a == b:
        return "transliterated" if transliterated else "identical"
    if len(a) == 1 or len(b) == 1:
        return "initial of"
    if sim == NICKNAME_SIM and short_form_of(spelling_key(a), spelling_key(b)):
        return "nickname of"
    if sim == CJK_SPELLING_SIM and same_chinese_name(a, b):
        return "Wade-Giles / pinyin"
    if sim == ROMANIZATION_SIM and same_romanization(a, b):
        return "romanization"
    if _vowelless(a) != _vowelless(b) and (sim in (ABJAD_SIM, ABJAD_SHORT_SIM, ABJAD_ARTICLE_SIM, MATRES_SIM,
                                                   VOWELLED_SIM) or
                                           b in ABJAD_LINKS.get(a, ()) or a in ABJAD_LINKS.get(b, ())):
        return "without short vowels"
    if transliterated and sim == VOWELLED_SIM and _vowelless(a[:-1] or a) and not _vowelless(b):
        return "without short vowels"  # "la" (على, ى for ي) / "Ali", read from its script letters (engine 3.3.0)
    if undouble(a) == undouble(b):
        return "doubled letter"
    if sim in (SPELLING_SIM, CJK_SPELLING_SIM, SHORT_VOWEL_SIM, SPELLING_EDIT_SIM) and (
            spelling_key(a)[:1] == spelling_key(b)[:1]):
        return "transliterated" if transliterated else "spelling"
    if len(a) >= PHONETIC_MIN_LEN and phonetic_key(a) and phonetic_key(a) == phonetic_key(b):
        return "same sound"
    return "typo"


_BURMESE_VOWELS = frozenset("aeiou")
_DROPPED_FIRST = frozenset("haeiouy")


@lru_cache(maxsize=262_144)
def _features(token: str) -> tuple[bool, str, bool, str, bool, str, str | None, tuple[str, ...], frozenset[str]]:
    """What `part_similarity` reads of a part, computed once per part: whether it is letters only, the part
    with doubled letters undone, whether it has no vowel, its spelling key, whether it is one romanized CJK
    syllable, its abjad key; and (engine 3.0.0) the letters its Wade-Giles and pinyin readings keep when it is
    a run of romanized Chinese syllables (`chinese_kept`, None when it is not), the letters its Cyrillic
    readings keep (`kept_letters`: the readings themselves are read only for two parts that keep the same), and
    the spelling keys of the full names it is a short form of (`given_names.full_names_of`)."""
    alpha = token.isalpha()
    # Burmese writes its aspirated t "ht" or "t" ("Htun"/"Tun", "Htay"/"Tay"): a variant, as a doubled letter is
    bare = token[1:] if token[:2] == "ht" and token[2:3] in _BURMESE_VOWELS else token
    spelling = spelling_key(token)
    return (alpha, undouble(bare), _vowelless(token), spelling if alpha else "", cjk_syllable(token),
            abjad_key(token) if alpha else "", chinese_kept(token), kept_letters(token), full_names_of(spelling))


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


def vowelless(token: str) -> bool:
    """A part written as an abjad writes it (`_vowelless`)."""
    return _vowelless(token)


# The sun letters, as a transliteration writes them (t, th, d, dh, r, z, s, sh, n: ت ث د ذ ر ز س ش ص ض ط ظ ن): the
# article's "l" before one is not pronounced, and romanizations write the letter doubled instead ("Nur al-Din" is
# "Nuruddin", "Noureddine"; "Abd al-Rahman" is "Abderrahmane", "Abdurrahman").
_SUN = frozenset("tdrzsn")


@lru_cache(maxsize=16_384)
def assimilated(token: str) -> str:
    """A part without vowels holding the article before a sun letter where names hold it most ("bdlrhmn",
    عبدالرحمن: "Abd al-" and a name; "nwrldyn", نورالدين: a name and "al-Din"), with that article's "l" left out
    as Latin writes it ("bdrhmn", Abderrahmane; "nwrdyn", Nuruddin); "" when it holds none (engine 3.1.0).
    Elsewhere an "l" before a sun letter is a letter of the name ("khldwn", Khaldun)."""
    if len(token) < 5 or not _vowelless(token):
        return ""
    if token[:3] == "bdl" and token[3] in _SUN:
        return "bd" + token[3:]
    if len(token) >= 6 and token.endswith("ldyn"):
        return token[:-4] + "dyn"
    return ""


_SKELETON_RULES = (("dj", "j"), ("dh", "z"), ("chr", "kr"), ("sch", "s"), ("tch", "ch"), ("dzh", "j"), ("ck", "k"),
                   ("q", "k"), ("x", "ks"))


@lru_cache(maxsize=16_384)
def skeleton(token: str) -> str:
    """A part's letters as an abjad writes them in the transliteration the engine reads (engine 3.1.0): no short
    vowel, no initial vowel (the transliteration drops an initial alef or ع: "ایوب" is "ywb", "عزيز" "zyz"), a
    consonantal "y" or "w" kept first, the letters after the first without vowels, "y" or "w", and a consonant
    written twice kept twice when a vowel stands between ("Aziz": "zz"). "Ayyub" and "ywb" are both "yb",
    "Yahia" and "yhya" "yh", "Aziz" and "zyz" "zz": more letters than the abjad key ("b", "h", "z"), which is
    too short to look up. A retrieval key only: `part_similarity` decides."""
    s = token
    for old, new in _SKELETON_RULES:
        if old in s:
            s = s.replace(old, new)
    s = undouble(_HARD_C.sub("k", s) if "c" in s else s).lstrip("aeiou")
    if not s:
        return ""
    return s[0] + "".join(ch for ch in s[1:] if ch not in "aeiouywv")


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
    return undouble(_HARD_C.sub("k", s) if "c" in s else s)


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
    if "c" in s:
        s = _HARD_C.sub("k", s)
    return undouble(s)


# Romanizations of Cyrillic (engine 3.0.0). One Russian, Ukrainian or Belarusian name is written in Latin
# letters by several systems: English and BGN/PCGN ("Gorbachev", "Yeltsin", "Mikhail"), German (Duden:
# "Gorbatschow", "Jelzin", "Michail"), French ("Gorbatchev", "Eltsine", "Mikhaïl"), and ISO 9 or the Baltic
# languages once their accents are folded ("Jeljcin", "Gorbačovs" -> "gorbacovs"). Each system reads a Latin
# part back into the Cyrillic letters it writes (a key of those letters: 1 ш/ж, 3 ч, 4 щ, 5 х, 6 ц; the
# vowel glides я ю е ё as their vowel), and two parts one of whose readings agree are one name written by
# two systems. The Baltic system also takes off the masculine case endings Lithuanian and Latvian add to a
# foreign name ("Vladimiras", "Jakovlevas", "Mihails"). The keys are folded as the spelling key is (e/i,
# o/u, doubled letters).
_ROMANIZATION_SYSTEMS = {
    "en": {"shch": "4", "sh": "1", "zh": "2", "ch": "3", "kh": "5", "ts": "6", "ya": "a", "yu": "u", "ye": "e",
           "yo": "o", "iy": "i", "yy": "i", "y": "i", "h": "5", "w": "v", "x": "ks", "'": ""},
    "de": {"schtsch": "4", "tsch": "3", "sch": "1", "ch": "5", "tz": "6", "z": "6", "ja": "a", "ju": "u",
           "je": "e", "jo": "o", "j": "i", "w": "v", "ss": "s", "y": "i", "h": "5", "ts": "6"},
    "fr": {"chtch": "4", "tch": "3", "ch": "1", "kh": "5", "ts": "6", "j": "2", "iou": "u", "ou": "u", "ia": "a",
           "ie": "e", "io": "o", "ss": "s", "y": "i", "h": "5", "w": "v", "gue": "ge", "gui": "gi"},
    "iso": {"ja": "a", "ju": "u", "je": "e", "jo": "o", "j": "i", "ch": "5", "c": "6", "h": "5", "x": "5",
            "w": "v", "y": "i"},
}
_ROMANIZATION_STEPS = {name: tuple(sorted(table.items(), key=lambda kv: -len(kv[0])))
                       for name, table in _ROMANIZATION_SYSTEMS.items()}
_BALTIC_ENDING = re.compile(r"(?<=[bcdfghjklmnprstvz])(?:as|is|ys|us|s)$|ij(?:us|s)$")
ROMANIZATION_MIN_LEN = 4


_HUSHED_YO = re.compile(r"(?<=[1234])uv")  # "-ёв" after ч, ш, ж, щ: "Gorbachev", "Gorbatschow", "Gorbatchev"
_ACCENT_LOST = re.compile(r"[csz](?!h)")  # a c, s or z that may have been č, š, ž before folding
MAX_BALTIC_VARIANTS = 8
_ACCENTED = {"c": "3", "s": "1", "z": "1"}


def _reading(name: str, stem: str) -> str:
    """`stem` as romanization system `name` reads it, folded (e/i, o/u, doubled letters; "-ёв")."""
    raw = stem
    for old, new in _ROMANIZATION_STEPS[name]:  # longest first: "shch" before "sh" before "h"
        if old in raw:
            raw = raw.replace(old, new)
    if name == "fr" and len(raw) > 4 and raw[-1] == "e" and raw[-2] not in "aeiou":
        raw = raw[:-1]  # French writes a final "e" after a consonant ("Poutine", "Eltsine")
    return _HUSHED_YO.sub("iv", undouble(raw.replace("e", "i").replace("o", "u"))).replace("2", "1")


def romanization_index_key(token: str) -> str:
    """The one reading the index files a listed part under: the English/BGN one (the lists' own system)."""
    if len(token) < ROMANIZATION_MIN_LEN or not token.isalpha():
        return ""
    return _reading("en", token)


@lru_cache(maxsize=65_536)
def romanization_keys(token: str) -> tuple[str, ...]:
    """The Cyrillic letters each romanization system reads in a part (see above), folded; () for a part
    shorter than ROMANIZATION_MIN_LEN or not letters only. A part with a Baltic case ending is also read
    without it, by the Baltic letters (ISO 9), and with each "c", "s", "z" that may have been "č", "š", "ž"
    before its accents were folded read as ч, ш, ж ("Gorbačovs" -> "gorbacov" -> "gorba-ч-ov"; at most
    MAX_BALTIC_VARIANTS)."""
    if len(token) < ROMANIZATION_MIN_LEN or not token.isalpha():
        return ()
    keys = list(dict.fromkeys(_reading(name, token) for name in _ROMANIZATION_SYSTEMS))
    m = _BALTIC_ENDING.search(token)
    if m and m.start() >= ROMANIZATION_MIN_LEN - 1:
        stem = token[:m.start()] + ("i" if m.group(0).startswith("ij") else "")
        places = [x.start() for x in _ACCENT_LOST.finditer(stem)][:3]
        variants = []
        for choice in itertools.product((False, True), repeat=len(places)):
            v = stem
            for pos, accent in zip(places, choice):
                if accent:  # č is ч, š ш, ž ж (the readings' "3" and "1")
                    v = v[:pos] + _ACCENTED[v[pos]] + v[pos + 1:]
            variants.append(v.replace("13", "4"))  # šč is щ
        for v in variants[:MAX_BALTIC_VARIANTS]:
            for name in ("iso", "en"):
                key = _reading(name, v)
                if key not in keys:
                    keys.append(key)
    return tuple(keys)


# The letters every romanization system of `_ROMANIZATION_SYSTEMS` reads as themselves: no rule writes them for
# another letter or drops them, so every reading of a part keeps them in their order ("ya", "ja", "ia" are read
# "a"; "gue", "gui" keep their "g"). A Baltic reading drops the "a" of an "-as" ending with the ending.
_KEPT = frozenset("abdfglmnpr")
_NOT_KEPT = {c: None for c in range(128) if chr(c) not in _KEPT}


def kept_letters(token: str) -> tuple[str, ...]:
    """The letters of a part that its Cyrillic readings (`romanization_keys`) keep (`_KEPT`, and letters outside
    ASCII, which no rule touches), doubled ones written once; with a Baltic "-as" ending, also those of the part
    without it. Two parts none of whose kept letters agree have no reading in common ("Gorbatschow" and
    "Gorbachev" both keep "grba"; "Antonio" keeps "an", "Antonia" "ana"): `part_similarity` reads no further."""
    own = undouble(token.translate(_NOT_KEPT))
    m = _BALTIC_ENDING.search(token)
    if m and m.start() >= ROMANIZATION_MIN_LEN - 1 and m.group(0) == "as":
        stem = undouble(token[:m.start()].translate(_NOT_KEPT))
        if stem != own:
            return own, stem
    return (own,)


def same_romanization(a: str, b: str) -> bool:
    """Two parts one romanization system reads as the same Cyrillic letters (`romanization_keys`)."""
    ka = romanization_keys(a)
    return bool(ka) and not set(ka).isdisjoint(romanization_keys(b))


@lru_cache(maxsize=1)
def _short_forms() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """{a short form's spelling key: the keys of the full names it stands for}, and the keys of full names
    (`given_names`)."""
    short_of: dict[str, set[str]] = {}
    # a "short form" that is a common given name or a particle in its own right ("Ali" for Alison, "Al") is
    # left out: in the lists "Ali" is the Arabic name
    own = {spelling_key(t) for t in CHAIN_NAMES | PREFIX_NAMES | PARTICLES}
    for full, short in short_form_pairs():
        f, s = spelling_key(full), spelling_key(short)
        if f != s and s not in own:
            short_of.setdefault(s, set()).add(f)
    return {k: frozenset(v) for k, v in short_of.items()}, frozenset(f for v in short_of.values() for f in v)


def full_names_of(key: str) -> frozenset[str]:
    """The spelling keys of the full names a part (by its spelling key) is a short form of."""
    return _short_forms()[0].get(key, frozenset())


def short_form_of(key_a: str, key_b: str) -> bool:
    """One part (by spelling key) is a short form of the other ("bub"/"rubirt": Bob, Robert)."""
    return key_b in full_names_of(key_a) or key_a in full_names_of(key_b)


def nickname_keys(key: str) -> tuple[str, ...]:
    """The keys an index files a part under for short forms: the full names it stands for, and itself when it
    is a full name; a short form and its full name meet under the full name's key."""
    out = tuple(sorted(full_names_of(key)))
    return out + (key,) if key in _short_forms()[1] else out


def _inner_typo(a: str, b: str, d: int) -> bool:
    """One substituted letter inside a part of 5 or more letters, first and last letters kept ("Murad" /
    "Mursd", "Scott" / "Siott"): the shape of a typing error. A changed first letter ("Kevin" / "Devin") or
    a short part stays another name."""
    if d != 1 or len(a) < INNER_TYPO_MIN_LEN or a[0] != b[0] or a[-1] != b[-1]:
        return False
    return True


# One romanized Chinese (pinyin) or Korean syllable: its initials are spelled both ways (`spelling_key`), and
# such a part left over in the middle is half of a two-syllable given name ("ZHANG Ming Wei" is not "Zhang
# Wei"), never a middle name (`matching`).
# pinyin, and Wade-Giles as Taiwan writes it ("Chien", "Hsing", "Tsai")
_PINYIN = re.compile(r"(zh|ch|sh|hs|ts|tz|[bpmfdtnlgkhjqxrzcsyw])?(iang|iong|iung|uang|ang|eng|ing|ong|ung|ian|ien|"
                     r"iao|ieh|uai|uan|uei|ueh|ai|ei|ao|ou|an|en|in|un|ia|ie|ih|iu|ua|uo|ui|ue|ve|er|a|o|e|i|u|v)")
_HANGUL = re.compile(r"(kk|tt|pp|ss|jj|ch|ts|[kgndtrlmbpsjhyw])?[wy]?(ae|eo|eu|oe|ui|a|e|i|o|u)(ng|[kntlmp])?")


@lru_cache(maxsize=16_384)
def cjk_syllable(token: str) -> bool:
    # a syllable has 7 letters at most (an initial of two, "w" or "y", a vowel of two, "ng")
    return len(token) <= 7 and bool(_PINYIN.fullmatch(token) or _HANGUL.fullmatch(token))

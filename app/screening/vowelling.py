"""Short name parts written in Arabic script, read with their vowels from the script's own letters (engine 3.3.0).

Arabic and Persian script write consonants and long vowels, not short vowels, and the transliteration the engine
reads (anyascii) writes an alef (ا) as nothing and drops an initial ع or hamza: "جان" is "jn" (Jan), "علي"
"ly" (Ali), "عمر" "mr" (Omar), "ضيا" "dy" (Zia). A part of one or two consonants is then too short to say which
name it is ("ly" / "Ali" scored 0.75, as any two names with an "l" would), but the script word says more: where an
alef stood (a long "a"), that the word began with ع or an alef (a vowel the Latin name starts with), which letter
is ض (written "d", read "z" in Persian and Urdu) and which is د. `reading(word)` turns such a word into the
Latin spellings its letters allow, each letter the ways romanizations write it and a short vowel allowed between
two consonants (never added at the end), and the consonant keys under which the index files those spellings.

Only a query word written in the script is read so (`normalize.abjad_words`): a Latin part without vowels ("Ly",
"Ng", "Sy" are Vietnamese, Chinese and Senegalese names) never is, and costs nothing. Hebrew is not: its ו and י are
consonants as often as vowels ("לוי" is Levi, not "Loi"), and reading them both ways raised the false alarms of
Hebrew names (docs/decisions.md "Screening engine 3.3.0"); its words keep their transliteration's rules.
"""
from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from app.screening.constants import (ABJAD_ARTICLE_SIM, ABJAD_LINKS, COMPOUND_MIN_LEN, VOWELLED_MAX_CONSONANTS,
                                     VOWELLED_MAX_LEN, VOWELLED_SIM)
from app.screening.normalize import SCRIPT_MARKS, abjad_words, undouble
from app.screening.similarity import abjad_key, skeleton, vowelless

_V = ("a", "e", "i", "o", "u")  # a short vowel, or the vowel after an initial alef or ع, as romanizations write it
# the ways romanizations write each consonant letter (Arabic, Persian, Urdu): as the English transliteration does,
# and as `similarity._READINGS` says other usages do (French, Maghrebi, Egyptian, Persian, Turkish, German)
_CONSONANTS = {
    "ب": ("b",), "پ": ("p",), "ت": ("t",), "ث": ("th", "s", "t"), "ج": ("j", "dj", "g"), "چ": ("ch", "tch"),
    "ح": ("h",), "خ": ("kh", "ch", "h"), "د": ("d",), "ذ": ("dh", "z", "d"), "ر": ("r",), "ز": ("z",),
    "ژ": ("zh", "j"), "س": ("s",), "ش": ("sh", "ch"), "ص": ("s",), "ض": ("d", "dh", "z"), "ط": ("t",),
    "ظ": ("z", "dh", "d"), "غ": ("gh", "g", "q"), "ف": ("f",), "ق": ("q", "k", "g", "gh"), "ك": ("k",),
    "ک": ("k",), "گ": ("g",), "ل": ("l",), "م": ("m",), "ن": ("n",),
}
_FIRST_VOWEL = frozenset("اأإعٱ")  # first: the vowel the word starts with (an alef or ع the transliteration drops)
_GLIDE = frozenset("ا")              # inside: a long "a"
_HAMZA = frozenset("عءئؤأإ")       # inside: ع or a hamza, a vowel or nothing in Latin ("Saad", "Raouf")
_YEH = frozenset("يی")
_WAW = frozenset("و")
_FINAL_H = frozenset("هة")
_LONG_I = ("i", "ee", "ei", "ey", "ai", "ay", "ie", "iy", "e", "y")
_LONG_U = ("u", "o", "ou", "oo", "ow", "aw", "au", "w", "v")


class Reading(NamedTuple):
    """A script word's Latin spellings: `pattern` matches each of them (a listed part, whole), `bare` each of them
    without the Arabic article the word starts with (None: it has none), `keys` are the keys the index files them
    under ("&" + `similarity.abjad_key`, "$" + `similarity.skeleton`)."""

    pattern: re.Pattern
    bare: re.Pattern | None
    keys: tuple[str, ...]


def eligible(token: str, word: str = "") -> bool:
    """A part, as transliterated, short enough to need its script's letters: two to VOWELLED_MAX_LEN letters
    without vowels (but for the final "a" of an alef maqsura, ى, which Egyptian writing also puts for ي: "على",
    Ali), one or two consonants (`abjad_key`: "ly", "jn", "mr", "ysy"), not a link of a nasab ("bn", "wld": they
    have their own rule)."""
    bare = token[:-1] if word[-1:] == "ى" and token[-1:] == "a" else token
    return (2 <= len(token) <= VOWELLED_MAX_LEN and token.isalpha() and not re.search("[aeiou]", bare)
            and len(abjad_key(token)) <= VOWELLED_MAX_CONSONANTS and token not in ABJAD_LINKS)


@lru_cache(maxsize=4096)
def reading(word: str) -> Reading | None:
    """The Latin spellings of one word written in Arabic or Persian script (see the module), or None when it holds
    a letter this table does not know (Hebrew among them) (the caller keeps the part's ordinary similarity). A word that
    starts with the Arabic article ("العوني") is also read without it ("Ouni"), as Latin often writes it."""
    letters = SCRIPT_MARKS.sub("", unicodedata.normalize("NFKC", word))
    slots = _slots(letters)
    if not slots:
        return None
    bare = _slots(letters[2:]) if letters[:2] == "ال" and len(letters) >= 4 else None
    keys = _keys(slots) + (_keys(bare) if bare else ())
    return Reading(_pattern(slots), _pattern(bare) if bare else None, tuple(dict.fromkeys(keys)))


def similarity(word: str, part: str) -> float:
    """VOWELLED_SIM when a Latin part is one of the spellings of the script word (`reading`), ABJAD_ARTICLE_SIM
    when it is one without the word's article ("العوني" / "Ouni", as the article rule of `similarity` scores it),
    else 0.0."""
    r = reading(word)
    if r is None:
        return 0.0
    if r.pattern.fullmatch(part):
        return VOWELLED_SIM
    return ABJAD_ARTICLE_SIM if r.bare is not None and r.bare.fullmatch(part) else 0.0


def _slots(letters: str) -> list[tuple[str, ...]] | None:
    """The Latin spellings of each letter of a word, in order, and a short vowel or nothing between two
    consonants; None when a letter is not one of the table's."""
    slots: list[tuple[str, ...]] = []
    consonant_before = False
    n = len(letters)
    for i, ch in enumerate(letters):
        last = i == n - 1
        nxt = letters[i + 1] if not last else ""
        if i == 0 and ch in _FIRST_VOWEL:
            # the vowel after an initial alef or ع: required before a consonant ("علي": Ali), merged with a long
            # vowel after it ("عيسى": Isa)
            slots.append(("",) + _V if nxt in _YEH or nxt in _WAW else (("i", "e") if ch == "إ" else _V))
            consonant_before = False
            continue
        if ch == "آ":
            slot, consonant = ("a", "aa"), False
        elif ch in _GLIDE:
            slot, consonant = ("a", "aa", "o"), False      # Dari and Tajik usage write ا "o" ("Jon")
        elif ch in _HAMZA:
            slot, consonant = ("",) + _V, False
        elif ch in _YEH:
            if i == 0:
                slot, consonant = ("y",), True
            elif last:
                # a final ی after a consonant is also an alef maqsura, as Persian and Egyptian writing do (عیسی: Isa),
                # and after a ی that is then the consonant "y" (یحیی: Yahya); not in a word of three letters ("علي"
                # is Ali, not Ala)
                maqsura = n >= 4 and (consonant_before or letters[i - 1] in _YEH)
                slot, consonant = _LONG_I + (("a",) if maqsura else ()), False
            else:
                slot, consonant = _LONG_I + ("ya", "ye", "yo", "yu"), False
        elif ch == "ى":
            slot, consonant = ("a", "i", "y", "e"), False
        elif ch in _WAW:
            if i == 0:
                slot, consonant = ("w", "v"), True
            elif last and consonant_before and n >= 4:
                slot, consonant = _LONG_U + ("",), False  # the silent و after a consonant ("عمرو": Amr)
            else:
                slot, consonant = _LONG_U + ("wa", "va"), False
        elif ch in _FINAL_H and last and i > 0:
            slot, consonant = ("a", "ah", "e", "eh", "h") + (("at", "et") if ch == "ة" else ()), False
        elif ch == "ه":
            slot, consonant = ("h",), True
        elif ch in _CONSONANTS:
            slot, consonant = _CONSONANTS[ch], True
        else:
            return None
        if consonant and consonant_before:
            slots.append(("",) + _V)  # a short vowel, unwritten, between two consonants
        slots.append(slot)
        consonant_before = consonant
    return slots or None


def _pattern(slots: list[tuple[str, ...]]) -> re.Pattern:
    return re.compile("".join(_group(s) for s in slots))


def _group(slot: tuple[str, ...]) -> str:
    """A slot as a regular expression: a single consonant letter may be written twice (a shadda: "Ali" / "Alli")."""
    alts = sorted({(re.escape(a) + a + "?") if len(a) == 1 and a not in "aeiou" else re.escape(a)
                   for a in slot if a}, key=lambda a: (-len(a), a))
    return "(?:" + "|".join(alts) + ")" + ("?" if "" in slot else "")


MAX_KEYS = 8


def _keys(slots: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The keys the index files the spellings under: for every choice of consonant letters (at most MAX_KEYS),
    the vowels as their first spelling, the consonant key ("&": "ali" "l", "omar" "mr") and the skeleton when
    it is longer ("$": "sassi" "ss", whose consonant key "s" is filed for parts of four letters at most)."""
    choices = [s if all(a and a[0] not in "aeiou" for a in s) else (s[0],) for s in slots]
    out: list[str] = []
    for combo in itertools.islice(itertools.product(*choices), MAX_KEYS):
        text = undouble("".join(combo)) or "a"
        k = abjad_key(text)
        skel = skeleton(text)
        for key in ("&" + k if k else "", "$" + skel if len(skel) >= 2 and skel != k else ""):
            if key and key not in out:
                out.append(key)
    return tuple(out)


def script_words(name: str, tokens: tuple[str, ...]) -> dict[str, str]:
    """{part of the name: the word in Arabic, Persian or Hebrew script it transliterates, one part} ("علي" for
    "ly"); {} for a name in Latin letters, for which nothing is computed."""
    if name.isascii():
        return {}
    out: dict[str, str] = {}
    for token, word in abjad_words(name):
        if token in tokens and token not in out:
            out[token] = word
    return out


def unit_scripts(name: str, tokens: tuple[str, ...]) -> dict[str, str]:
    """What the index reads more in a query's units written in an abjad (`ScreeningIndex.unit_match`'s `script`):
    {a short part (`eligible`) or a long one (COMPOUND_MIN_LEN: maybe two names written together): its script
    word; two parts written together, both in the script: their two words}. {} for a name in Latin letters."""
    words = script_words(name, tokens)
    if not words:
        return {}
    out: dict[str, str] = {}
    for k, token in enumerate(tokens):
        word = words.get(token)
        if word and token not in out and (eligible(token, word) or (
                len(token) >= COMPOUND_MIN_LEN and token.isalpha() and vowelless(token))):
            out[token] = word
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        if word and nxt in words and token + nxt not in out:
            out[token + nxt] = f"{word} {words[nxt]}"
    return out

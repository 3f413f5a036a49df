"""How two names compare (pure Python over plain data): the alignment of their parts and the name score.

Names are compared part by part. Every query name part ("unit": a token, or two adjacent tokens written
together, so "Abdulrahman" meets "Abdul Rahman") is aligned with at most one part of the listed name, best
pairs first, each pair counting for its similarity (`similarity.part_similarity`, which also says which pairs
the search type lets align).

The name score is the weighted share of both names that aligned. Parts of the listed name left over count
less than parts of the query left over (lists carry long patronymic chains; a query part that matches nothing
is evidence against); a part that its shape or its place explains (a particle, a patronymic, a father's name,
a middle name) counts less again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from app.screening.constants import (ARTICLES, BELARUSIAN_PATRONYMIC_MIN_LEN, BELARUSIAN_PATRONYMIC_SUFFIXES,
                                     CHAIN_NAMES, EXPLAINED_LEFTOVER_WEIGHT, FAMILY_MISMATCH_CAP, FATHER_LINKS,
                                     INITIAL_SIM,
                                     LIST_LEFTOVER_WEIGHT, MIDDLE_LEFTOVER_WEIGHT, MIDDLE_MIN_LEN, NASAB,
                                     ORG_CONTAINED_WEIGHT, PARTICLES, PATRONYMIC_SUFFIXES,
                                     PERSON_CONTAINED_MIN_PARTS, PERSON_CONTAINED_WEIGHT, PREFIX_NAMES,
                                     QUERY_LEFTOVER_WEIGHT, SIM_EXPONENT, THEOPHORIC_PREFIXES, THEOPHORIC_SUFFIXES,
                                     VOWELLED_SIM)
from app.screening.similarity import cjk_syllable, part_similarity, vowelless
from app.screening.vowelling import eligible, similarity as vowelled_similarity


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
    # the query place of each pair and each query part left over, the listed place of each listed part left
    # over (the explanation lists them in the query's order)
    query_places: list[int] = field(default_factory=list)
    listed_places: list[int] = field(default_factory=list)
    # the query's place where a father's name starts that the listed name does not hold (`fathers_name`): its
    # parts, left over, weigh nothing
    fathers_from: int | None = None

    def explain(self, rules: list[str] | None = None) -> list[dict]:
        """Every part of both names in the order of the query (the listed parts left over last, in their
        order): the pair (or the part left over), its similarity, the rule that aligned it (`rules`, one per
        pair: `similarity.part_rule`), its weight in the score's denominator and its contribution to the
        numerator (score = sum(contribution) / sum(weight))."""
        weights = self.weights or [1.0] * (len(self.pairs) + len(self.query_leftover) + len(self.list_leftover))
        out = []
        for k, ((q, m, s), w) in enumerate(zip(self.pairs, weights)):
            part = {"query": q, "matched": m, "score": round(s, 4), "weight": round(w, 4),
                    "contribution": round(w * s ** SIM_EXPONENT, 4)}
            if rules is not None:
                part["rule"] = rules[k]
            out.append(part)
        rest = weights[len(self.pairs):]
        left_places = self.query_places[len(self.pairs):]
        for k, (q, w) in enumerate(zip(self.query_leftover, rest)):
            out.append({"query": q, "matched": None, "score": 0.0, "weight": round(w, 4), "contribution": 0.0})
            if rules is not None:
                fathers = self.fathers_from is not None and k < len(left_places) and \
                    left_places[k] >= self.fathers_from
                out[-1]["rule"] = FATHERS_NAME if fathers else "with the next part" if w == 0 else "unmatched"
        rest = rest[len(self.query_leftover):]
        listed = []
        for m, w in zip(self.list_leftover, rest):
            listed.append({"query": None, "matched": m, "score": 0.0, "weight": round(w, 4), "contribution": 0.0})
            if rules is not None:
                listed[-1]["rule"] = "with the next part" if w == 0 else "unmatched"
        if len(self.query_places) == len(out):
            out = [p for _, p in sorted(zip(self.query_places, out), key=lambda x: x[0])]
        if len(self.listed_places) == len(listed):
            listed = [p for _, p in sorted(zip(self.listed_places, listed), key=lambda x: x[0])]
        return out + listed


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


def align(q_tokens: tuple[str, ...], a_tokens: tuple[str, ...], rev: Reverse, initials: bool | str = False,
          weight=_uniform, person: bool = True, left: list[float] | None = None, need: float = 0.0) -> Alignment:
    """Greedy best-first alignment of query units with the listed name's units (single tokens and adjacent
    pairs written together); `rev` says which query units may align with a listed unit, and how well.
    `initials`: parts left over that are one letter align with a left-over part starting with it, at
    INITIAL_SIM ("J. R. R. Tolkien" / "John Ronald Reuel Tolkien"); True (broad search) both ways, "query"
    (medium search, engine 3.0.0) a query initial only: the candidate bounds assume no more. `person`: a part
    left over between two aligned parts is a middle name (organizations have
    none: "SHARQ WHITE CEMENT" is not "SHARQ CEMENT").

    `need` (with `left`, the least weight of each query part left over: `least_query_leftover` times its weight):
    the score a caller keeps; an alignment whose pairs cannot reach it, however little the parts left over weigh,
    is not scored further (an `Alignment` of 0 with no pairs)."""
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
    best, blocked = _greedy(candidates, q_tokens, a_tokens, initials, weight, person, left, need)
    if blocked is True and best.score < 1.0:
        # Parts written together taken first, ties otherwise as above, when that scores better: one by one,
        # "el" / "el" would leave "Alshafee" against "El Shafee" and "El Sheikh" against "Elsheikh" unpaired
        # (0.23; 0.93 together), and "rwdy" / "Rudi" would weigh apart (0.75) what "rwdy slywh" / "Rudi
        # Slaiwah" written together scores 0.9. Only when a pair of parts written together lost a tie to
        # a pair that took one of its parts: otherwise the other order pairs the same parts.
        candidates.sort(key=lambda c: (-c[0], -((c[3] != c[2]) + (c[5] != c[4])), -c[1], c[2], c[4]))
        joined, _ = _greedy(candidates, q_tokens, a_tokens, initials, weight, person, left, need)
        if joined.score > best.score:
            best = joined
    elif blocked == _OUTSCORED and best.score < 1.0:
        # Two query parts written together against one listed part, passed over for a nearer pair that took
        # one of them: "myn llh myn" / "Aminullah Amin" pairs "myn" / "Amin" (0.94) first, then the second
        # "myn" finds nothing and "Aminullah" is left over (0.38); taken first, "mynllh" / "Aminullah" (0.9)
        # leaves "myn" / "Amin" to pair (0.91). Tried in that order too, and the better score kept (3.1.0).
        candidates.sort(key=lambda c: (c[2] == c[3] or c[4] != c[5], -c[0], -c[1], c[2], c[4]))
        joined, _ = _greedy(candidates, q_tokens, a_tokens, initials, weight, person, left, need)
        if joined.score > best.score:
            best = joined
    return best


_OUTSCORED = 2  # `_greedy`: a query's two parts written together lost a listed part to a nearer pair


def _greedy(candidates: list, q_tokens: tuple[str, ...], a_tokens: tuple[str, ...], initials: bool | str, weight,
            person: bool, left: list[float] | None = None, need: float = 0.0) -> tuple[Alignment, bool]:
    """`align`'s pairing, in the order of `candidates`, and the score of what it paired and left over; and
    whether a candidate pair of parts written together was passed over for a pair as similar (a tie: True), or
    two query parts written together for a nearer pair of one of them while the listed part stayed free
    (`_OUTSCORED`); an `Alignment` of 0 with no pairs when the pairs cannot reach `need` (see `align`)."""
    blocked = False
    n = len(a_tokens)
    q_used: list = [False] * len(q_tokens)  # False, or the similarity of the pair that took the part
    a_used: list = [False] * n
    pairs = []
    places = []  # (query place, listed place) of each pair
    weights = []
    matched = 0.0
    n_parts = 0  # aligned parts: a pair of two parts written together against two counts two
    for s, length, qi, qj, ai, aj, qt, at in candidates:
        if q_used[qi] or q_used[qj] or a_used[ai] or a_used[aj]:
            if blocked is not True and (qi != qj or ai != aj):
                if s in (q_used[qi], q_used[qj], a_used[ai], a_used[aj]):
                    blocked = True
                elif qi != qj and ai == aj and not a_used[ai]:
                    blocked = _OUTSCORED
            continue
        q_used[qi] = q_used[qj] = s
        a_used[ai] = a_used[aj] = s
        pairs.append((qt, at, s))
        places.append((qi, ai))
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
            if q_used[qi] or (len(qt) > 1 and initials != True) or not qt.isalpha():  # noqa: E712 ("query")
                continue
            for ai, at in enumerate(a_tokens):
                if (not a_used[ai] and (len(qt) == 1 or len(at) == 1) and qt[0] == at[0] and qt != at
                        and at.isalpha()):
                    q_used[qi] = a_used[ai] = True
                    pairs.append((qt, at, INITIAL_SIM))
                    places.append((qi, ai))
                    w = min(weight(qt), weight(at))
                    weights.append(w)
                    matched += w * INITIAL_SIM ** SIM_EXPONENT
                    break
    if need > 0.0 and left is not None and (len(q_tokens) > 1 or n > 1):
        # The score is matched / (the pairs' weights + the parts left over's): each query part left over weighs
        # `left` at least, a listed one nothing at least, and the caps below only lower it. A name that cannot
        # reach `need` so is not worth the rest (most candidate names of a screening).
        least = sum(weights) + sum(w for w, used in zip(left, q_used) if not used)
        if matched < need * least * (1.0 - 1e-9):
            return Alignment(0.0), blocked
    q_left = [t for t, used in zip(q_tokens, q_used) if not used]
    a_left = [t for t, used in zip(a_tokens, a_used) if not used]
    q_mid = _between(q_used) if person else ()
    q_here, a_here = _explained_here(q_tokens, q_used, a_tokens, a_used) if person else ((), ())
    fathers = _fathers_left(q_tokens, q_used, a_tokens, a_used, places) \
        if person and not q_used[-1] and not FATHER_LINKS.isdisjoint(q_tokens) else None
    for i, t in enumerate(q_tokens):
        if fathers is not None and i >= fathers:
            weights.append(0.0)
        elif not q_used[i]:
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
    fq = _given_at(q_tokens) if person and q_tokens[0] in _GIVEN_PREFIXES else 0
    fa = _given_at(a_tokens) if person and a_tokens[0] in _GIVEN_PREFIXES else 0
    if (person and not q_used[fq] and not a_used[fa] and fq not in q_here and fa not in a_here
            and len(q_tokens[fq]) > 1 and len(a_tokens[fa]) > 1 and not explained_leftover(q_tokens[fq])
            and not explained_leftover(a_tokens[fa])):
        # both first (given) names left over: siblings share the rest of a chain of names ("Abdallah Hadi
        # Fayhan AL-ANIZI" / "Muhammad Hadi Fayhan AL-ANIZI" are brothers): at most what a family
        # mismatch scores (engine 2.5.0). The given name of "Abd al-Aziz", "Abdul Karim", "Abu Bakr" is the
        # name after "Abd" (and the article): "Abd al-Aziz Hamid" is not "Abd al-Karim Hamid" (engine 3.5.0)
        score = min(score, FAMILY_MISMATCH_CAP)
    if person and _chains_differ(q_tokens, q_used, a_tokens, a_used, places):
        # a chain of names linked by bin/ibn/ben says whose son: "OMAR BIN KHALID" is not "KHALID BIN OMAR",
        # and "ALI BEN AHMED" not "ALI BEN HAMID" (engine 3.0.0)
        score = min(score, FAMILY_MISMATCH_CAP)
    if any(not t.isalpha() for t in q_left) and any(not t.isalpha() for t in a_left):
        # different numbers: another unit, vessel or company ("99TH LIGHT INFANTRY DIVISION" / "77TH ...")
        score = min(score, FAMILY_MISMATCH_CAP)
    return Alignment(score, pairs, q_left, a_left, weights,
                     [qi for qi, _ in places] + [i for i, used in enumerate(q_used) if not used],
                     [i for i, used in enumerate(a_used) if not used], fathers), blocked


_GIVEN_PREFIXES = THEOPHORIC_PREFIXES | {"abu"}


def _given_at(tokens: tuple[str, ...]) -> int:
    """Where a person's first given name is: after a leading "Abd", "Abdul" or "Abu" and the article after it, when a
    name follows ("Abd al-Aziz": "aziz"; "Abu Bakr": "bakr"), else the first part (engine 3.5.0)."""
    if tokens[0] not in _GIVEN_PREFIXES:
        return 0
    i = 2 if len(tokens) > 2 and tokens[1] in ARTICLES else 1
    return i if i < len(tokens) - 1 else 0


FATHERS_NAME = "father's name"


def fathers_name(tokens: tuple[str, ...]) -> int | None:
    """Where a person's name's father's name starts: at its first "walad" (ولد, `FATHER_LINKS`) after two names at
    least (particles and initials not counted: "Abu Abdallah" is one, a kunya) and before two parts at least
    ("Gulab Gul walad Hazrat Gul"), to the end of the name; None when it has none, or when a part with the article
    follows it (a family name: "... walad Salem al-Qudrani"). One part after a link is already explained by its
    place (`explained_by_place`). "bin", "ben", "ould" and "son of" (read "bin") are not taken: they often begin a
    family name ("bin Laden"), and taking them loosened the candidate bounds of every "X Y bin Z" query (+11%
    alignments on the dev queries)."""
    if FATHER_LINKS.isdisjoint(tokens):
        return None
    for k in range(2, len(tokens) - 2):
        if tokens[k] in FATHER_LINKS:
            own = sum(not _particle(t) and len(t) > 1 for t in tokens[:k])
            return None if own < 2 or any(_with_article(t) for t in tokens[k + 1:]) else k
    return None


def _fathers_left(q_tokens: tuple[str, ...], q_used: list, a_tokens: tuple[str, ...], a_used: list,
                  places: list[tuple[int, int]]) -> int | None:
    """The place of the query's father's name (`fathers_name`) when the listed name is the query's own name without
    it: every listed part aligned, in the listed order, with a part before the link, every part before it aligned,
    none after it, and the listed name holds no link (engine 3.4.0). Afghan and Pakistani records write the father
    in the name ("X walad Y"); a list that names the person "X" says nothing of the father, whose name can neither
    confirm nor contradict it: it weighs nothing, as a date of birth the list does not give. A listed name with a
    father's name of its own is another matter (`_chains_differ`, `explained_by_place`)."""
    k = fathers_name(q_tokens)
    if (k is None or not all(a_used) or not all(q_used[:k]) or any(q_used[k:])
            or not NASAB.isdisjoint(a_tokens)):
        return None
    listed = [ai for _, ai in sorted(places)]
    return k if all(x < y for x, y in zip(listed, listed[1:])) else None


def _with_article(token: str) -> bool:
    """A part with the Arabic article, apart or written with it ("al", "Alqudrani", لقدراني "lqdrny"): after a
    father's name, a family name (a nisba), which the listed name lacks: not only a father's name left out."""
    return token in ARTICLES or (token[:2] in ARTICLES and len(token) >= 5) or (
        token[:1] == "l" and len(token) >= 4 and vowelless(token))


def _chains_differ(q_tokens: tuple[str, ...], q_used: list, a_tokens: tuple[str, ...], a_used: list,
                   places: list[tuple[int, int]]) -> bool:
    """Two names that both hold a nasab link ("bin", "ibn", "ben", "ould") name a father: they are two people
    when the names they share stand in another order ("OMAR BIN KHALID AL-MANSOURI" / "KHALID BIN OMAR
    AL-MANSOURI": father and son) or when each has a father's name, after a link, the other lacks
    ("MOHAMED BEN ALI BEN AHMED" / "MOHAMED BEN ALI BEN HAMID": cousins)."""
    if NASAB.isdisjoint(q_tokens) or NASAB.isdisjoint(a_tokens):
        return False
    order = sorted((qi, ai) for qi, ai in places if q_tokens[qi] not in PARTICLES)
    if any(x[1] >= y[1] for x, y in zip(order, order[1:])):
        return True
    return (any(not q_used[i] and q_tokens[i - 1] in NASAB for i in range(1, len(q_tokens)))
            and any(not a_used[i] and a_tokens[i - 1] in NASAB for i in range(1, len(a_tokens))))


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
    fathers = fathers_name(q_tokens) if not FATHER_LINKS.isdisjoint(q_tokens) else None
    if fathers is not None and k >= fathers:
        return 0.0  # a father's name the listed name does not hold (`_fathers_left`)
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



def name_score(q_tokens: Iterable[str], a_tokens: Iterable[str], search_type: str = "medium_search",
               weight=_uniform, person: bool = True, script: dict[str, str] | None = None) -> Alignment:
    """Align two token sequences computing similarities directly (no index); used by compare-pairs. `script`:
    the query's short parts written in an abjad and their script words (`vowelling.script_words`)."""
    q_tokens, a_tokens = tuple(q_tokens), tuple(a_tokens)
    listed = [u for u, _, _ in units(a_tokens)]
    matches = {}
    for text, i, j in units(q_tokens):
        found = {}
        word = script.get(text) if script and i == j and search_type != "narrow_search" else None
        word = word if word and eligible(text, word) else None
        for other in listed:
            s = part_similarity(text, other, search_type)
            if word and s < VOWELLED_SIM:
                s = max(s, vowelled_similarity(word, other))  # its script letters spell the other ("jn", جان: "Jan")
            if s > 0.0:
                found[other] = s
        matches[text] = found
    return align(q_tokens, a_tokens, reverse_matches(q_tokens, matches), initials_mode(search_type), weight,
                 person)


def initials_mode(search_type: str) -> bool | str:
    """Which initials align with names (`align`): both ways in broad search, a query's in medium search
    (engine 3.0.0: "M. Rutte" / "Mark Rutte"), none in narrow search."""
    return True if search_type == "broad_search" else "query" if search_type == "medium_search" else False

"""The score of two names with nothing else known (`flask screening compare-pairs`), pure Python.

Neither name is the query: each is read both ways and the better reading counts. A name written as several
("Haj Qasem; Haji Qassem", "AL-QAIDA IN THE ARABIAN PENINSULA (AQAP)", "Jin Tiesan (金铁三)") is compared as
each of them. Organizations also meet their acronym ("NITC" / "NATIONAL IRANIAN TANKER COMPANY"). Two names
with no part in common score below 0.5 by how alike they are written, so that a ranking still orders them.
"""
from __future__ import annotations

from rapidfuzz.distance import JaroWinkler

from app.screening.matching import name_score
from app.screening.normalize import (ORG_SCHEMAS, PERSON, is_acronym_of, name_tokens, name_variants, qualifiers,
                                     theophoric_variants)
from app.screening.vowelling import script_words

ACRONYM_SIM = 0.9       # an organization's acronym against its name
UNALIGNED_SCALE = 0.5   # names sharing no part: at most half, by the Jaro-Winkler similarity of their letters


def pair_score(name1: str, name2: str, schema: str = PERSON, search_type: str = "medium_search") -> float:
    best = 0.0
    aligned = False
    # two organizations each with a qualifier, the qualifiers different ("Bank of Yunnan (Paris) S.A." /
    # "Bank of Yunnan (Tokyo) Ltd."): two branches, compared with their qualifiers (engine 3.0.0)
    q1, q2 = (qualifiers(name1), qualifiers(name2)) if schema in ORG_SCHEMAS else (set(), set())
    keep_bare = not (q1 and q2 and q1 != q2)
    for v1 in name_variants(name1, keep_bare):
        t1 = name_tokens(v1, schema)
        for v2 in name_variants(name2, keep_bare):
            t2 = name_tokens(v2, schema)
            if not t1 or not t2:
                continue
            for (q, vq), a in (((t1, v1), t2), ((t2, v2), t1)):
                result = name_score(q, a, search_type, person=schema == PERSON, script=script_words(vq, q))
                aligned = aligned or bool(result.pairs)
                best = max(best, result.score)
                # "Abd al-Aziz" read as "Abdulaziz" and the other way, as a screening reads a query (engine 3.5.0)
                for variant in theophoric_variants(q) if schema == PERSON else ():
                    best = max(best, name_score(variant, a, search_type, person=True).score)
            if schema in ORG_SCHEMAS and (is_acronym_of(v1, v2) or is_acronym_of(v2, v1)):
                best = max(best, ACRONYM_SIM)
    if not aligned and best < UNALIGNED_SCALE:
        t1, t2 = name_tokens(name1, schema), name_tokens(name2, schema)
        if t1 and t2:
            best = max(best, UNALIGNED_SCALE * JaroWinkler.similarity("".join(t1), "".join(t2)))
    return round(best, 4)

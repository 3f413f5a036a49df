"""The word lists and tunable constants of name and qualifier scoring, in one place: changing any of them changes
what a score means (bump `engine.ENGINE_VERSION`). Plain data; `similarity` (two parts), `matching` (two names)
and `engine` (qualifiers) read them.
"""
from __future__ import annotations

SEARCH_TYPES = ("narrow_search", "medium_search", "broad_search")

# Tunable constants of the name score.
PHONETIC_FLOOR = 0.82        # similarity of two parts that sound alike (same Metaphone and first letter),
PHONETIC_STEP = 0.03         # less per edit beyond the first
PHONETIC_MIN_LEN = 5         # shorter parts sound alike too easily ("Hurt"/"Huerta")
SHORT_TOKEN_LEN = 6          # a substitution in a part this short changes the name ("Kevin"/"Devin"):
SHORT_SUBSTITUTION_COST = 2.0  # it costs this many edits (a swap, an insertion or a deletion stays at 1)
INNER_TYPO_MIN_LEN = 5       # ... unless it is one letter inside a part this long, first and last kept
INITIAL_SIM = 0.8            # "J" against "John" (broad: both ways; medium, engine 3.0.0: a query's initial;
                             # 2.5.0 had 0.75, broad only)
ROMANIZATION_SIM = 0.88      # one Cyrillic name written by two romanization systems ("Jelzin"/"Yeltsin"; 3.0.0)
NICKNAME_SIM = 0.85          # a short form against its full name ("Bob"/"Robert", "Misha"/"Mikhail"; 3.0.0)
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
# A part after one of these is a father's name, a patronymic written in words ("Mehdi Ben Mohamed KAMMOUN"); "bn"
# and "bnt" are بن / ابن and بنت as the Arabic script's letters transliterate (engine 3.2.0), "wld" ولد
NASAB = frozenset("bin ibn ben bint binti ould wuld wld walad bn bnt".split())
# The links of a nasab written in Arabic script, and the words Latin writes for each (engine 3.2.0): بن, ابن ("bn") and
# ولد ("wld": Mauritanian and Afghan usage) are "son of", written "bin", "ibn", the Maghrebi "ben", the Mauritanian
# "ould" or, in English-language lists, "son of" (read "bin": `normalize.name_tokens`); بنت ("bnt") is "bint"
_SON_OF = frozenset("bin ibn ben ould wuld walad".split())
# The links after which Afghan and Pakistani records write the father's name, and nothing else (ولد, "walad": "Gulab
# Gul walad Hazrat Gul"), where Gulf and Maghrebi "bin", "ben" and Mauritanian "ould" often begin a family name ("bin
# Laden") (engine 3.4.0: `matching.fathers_name`)
FATHER_LINKS = frozenset(("wld", "walad"))
ABJAD_LINKS = {"bn": _SON_OF, "wld": _SON_OF, "bnt": frozenset(("bint", "binti"))}
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
PARTICLES = frozenset("al el bin ibn bint ben ould bn bnt wld abu abd de del della di da do dos das van von der den "
                      "le la "
                      "mac mc y e and of the for und et "
                      # the Arabic article assimilated as Urdu and Persian romanizations write it ("Shams-ur-Rahman",
                      # "Nasir-ud-Din", "Ghulam-ul-Haq"; engine 3.0.0)
                      "ul ur ud us".split())  # "and" ... "et": filler words of organization names
TRANSPOSITION_DISCOUNT = 0.65  # a swap counts as 0.35 of an edit
DOUBLED_LETTER_COST = 0.35   # "mohamad"/"mohammad", "esa"/"essa": a transliteration variant, not another name
MIN_PART_LEN_FOR_EDIT = 3    # shorter parts must be identical (or phonetic + 1 edit)
ABJAD_SIM = 0.9             # a part written without vowels (an abjad script) against one with the same consonants
MATRES_SIM = 0.94           # ... with its long vowels written where the other has them ("rwdy" / "Rudi": و u, ي i):
                            # one name written two ways, as a spelling key is (engine 3.0.0)
ABJAD_SHORT_SIM = 0.75      # ... when one or two consonants are left ("ly" / "ali"; "hsn" / "hasan" has 3)
ABJAD_ARTICLE_SIM = 0.85    # ... with the article joined to it, left out of the other ("lthr" / "Taher"): less than
                            # the article and the name written together against two ("ltkryty" / "al Tikriti")
VOWELLED_SIM = 0.9          # a short part written in an abjad ("jn", جان; "ly", علي) against a Latin spelling its
                            # script letters allow ("Jan", "Ali": `vowelling`), where its consonants alone gave
                            # ABJAD_SHORT_SIM; a query word in the script only (engine 3.3.0)
VOWELLED_MAX_LEN = 4        # ... a part of this many letters at most (as transliterated),
VOWELLED_MAX_CONSONANTS = 2  # with this many consonants at most (`similarity.abjad_key`)
COMPOUND_MIN_LEN = 6        # a part written in an abjad this long may be two listed parts written together
                            # ("khdyrhym", خدايرحيم: "Khudai Rahim"; `index.ScreeningIndex._compounds`, 3.3.0)
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

# --- qualifiers ----------------------------------------------------------------------------------------

DOB_BONUS_EXACT = 0.05      # full date equal
DOB_BONUS_YEAR = 0.02       # equal at the coarser precision (year, or year-month)
DOB_PENALTY_DAY = 0.02      # same year, different month/day ("wrong birth day")
DOB_PENALTY_NEAR = 0.10     # one year apart (broad: tolerated, counted as DOB_PENALTY_DAY)
DOB_PENALTY_CONFLICT = 0.25
COUNTRY_BONUS = 0.0         # sharing a nationality is weak evidence; only a conflict counts
COUNTRY_PENALTY = 0.08
GENDER_PENALTY = 0.10

"""Name, date and country normalization shared by the importers and the matcher (pure Python).

Names go through: Unicode NFKC, transliteration of any script to ASCII (anyascii, ISC licence), case
folding, apostrophes and dots dropped inside words ("Mu'ab" -> "muab", "S.A." -> "sa"), any other
punctuation turned into a space, "LAST, First" put back in natural order, honorifics and generational
suffixes dropped, and for organizations the legal form ("Ltd", "GmbH", "S.A. de C.V.") dropped.
"""
from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from functools import lru_cache

from dateutil import parser as dateparser
from rapidfuzz.distance import OSA

from anyascii import anyascii

# --- names -------------------------------------------------------------------------------------------

_APOSTROPHES = "'’‘`´ʼʻʹʿʾ′‛\""
_JOINERS = re.compile(r"(?<=\w)[" + re.escape(_APOSTROPHES) + r".](?=\w)")
_DROP = re.compile(r"[" + re.escape(_APOSTROPHES) + r".]")
_SPLIT = re.compile(r"[^a-z0-9]+")

# Honorifics, ranks and religious titles that say nothing about who someone is: dropped only at the start
# of a person's name, and only when written in the Latin script ("John Major" keeps "major"; an Arabic
# given name that transliterates to "mr" is a name). Generational suffixes and degrees ("Jr", "III", "PhD")
# are dropped only at the end (lists are inconsistent about them).
TITLES = frozenset("""
mr mrs ms mss miss mx dr doctor prof professor sir dame lord lady hon honorable honourable rev reverend
fr father
gen general col colonel maj major capt captain lt lieutenant sgt sergeant cmdr commander adm admiral brig
sheikh shaikh shaykh sheik cheikh haji hajji alhaji alhaj hadji mullah mulla mawlawi maulavi maulvi mawlavi
maulana mawlana qari imam cde comrade
""".split())
SUFFIXES = frozenset("sr jr snr jnr ii iii iv esq phd md".split())

# Legal forms of organizations (after dots are dropped: "S.A." -> "sa"). Multi-word forms are matched
# as token sequences at the end of the name (or anywhere for the Latin-American "de cv" family).
LEGAL_FORMS = frozenset("""
ltd limited llc llp lp plc inc incorporated corp corporation co company cos gmbh mbh ag kg kgaa ohg ug
sa sas sarl sarlu srl spa sp sl slu bv nv cv vof oy oyj ab as asa aps a/s se sae saog saoc sal
pty pte bhd sdn tbk pt cjsc ojsc jsc pjsc ooo oao zao pao ao tov pp kft zrt nyrt doo dd ad eood ood
fze fzco fzc fzllc wll est establishment trading holding holdings group intl international
kk yk gk cic jv eu ltda eireli me epp lda limitada pjs pjsc ca scs aktiengesellschaft pvt private
sti bsc bscc qsc qpsc ksc kscp kscc psc
""".split())  # the last line: Turkish "Ltd. Şti.", the Gulf's shareholding companies (B.S.C., Q.P.S.C., K.S.C.P.)
# Legal forms written out in words, read as their abbreviation wherever they stand ("Joint-Stock Company
# Renova" is "JSC Renova"; "Obshchestvo s Ogranichennoi Otvetstvennostyu Neobit" is "OOO Neobit").
LEGAL_FORM_PHRASES = {
    ("open", "joint", "stock", "company"): "ojsc", ("closed", "joint", "stock", "company"): "cjsc",
    ("public", "joint", "stock", "company"): "pjsc", ("joint", "stock", "company"): "jsc",
    ("limited", "liability", "company"): "llc", ("limited", "liability", "partnership"): "llp",
    ("private", "limited", "company"): "ltd", ("private", "limited"): "ltd", ("public", "limited", "company"): "plc",
    ("obshchestvo", "s", "ogranichennoi", "otvetstvennostyu"): "ooo",
    ("obshchestvo", "s", "ogranichennoy", "otvetstvennostyu"): "ooo",
    ("aktsionernoe", "obshchestvo"): "ao", ("publichnoe", "aktsionernoe", "obshchestvo"): "pao",
    ("zakrytoe", "aktsionernoe", "obshchestvo"): "zao", ("otkrytoe", "aktsionernoe", "obshchestvo"): "oao",
    ("tovarystvo", "z", "obmezhenoyu", "vidpovidalnistyu"): "tov",
    ("sociedad", "anonima"): "sa", ("sociedade", "anonima"): "sa", ("societe", "anonyme"): "sa",
    ("sociedad", "limitada"): "sl", ("societa", "per", "azioni"): "spa",
    ("sociedad", "de", "responsabilidad", "limitada"): "srl", ("de", "capital", "variable"): "cv",  # "de C.V."
    ("sociedad", "por", "acciones", "simplificada"): "sas", ("sociedad", "en", "comandita", "simple"): "scs",
    ("compania", "anonima"): "ca", ("sociedade", "limitada"): "ltda",
    ("societe", "a", "responsabilite", "limitee"): "sarl", ("societe", "par", "actions", "simplifiee"): "sas",
    ("societa", "a", "responsabilita", "limitata"): "srl",
    ("gesellschaft", "mit", "beschrankter", "haftung"): "gmbh", ("private", "joint", "stock", "company"): "jsc",
    ("besloten", "vennootschap"): "bv", ("naamloze", "vennootschap"): "nv",
    ("limited", "sirketi"): "ltd", ("anonim", "sirketi"): "as",               # Turkish
    ("joint", "venture"): "jv",
    ("cong", "ty", "tnhh"): "llc", ("cong", "ty", "co", "phan"): "jsc",       # Vietnamese
}
# Words of organization names written several ways, read as one ("JOZA INDUSTRIES" is "JOZA INDUSTRIAL";
# "POUYA AIRLINES" is "POUYA AIR").
ORG_WORDS = {w: canon for canon, words in {
    "industry": "industries industrial industrie industria industrias industriales industriel industrielle ind inds "
                "indus",
    "finance": "financial financing financiera financiero financieras financieros fin",
    "trade": "trading trd traders trader tradings",
    "service": "services svcs svc servicio servicios servicos",
    "brothers": "bros brother",
    "manufacturing": "mfg manufacture manufacturer manufacturers",
    "shipping": "shpg",
    "air": "airlines airline airways",
    "engineering": "eng engg engineers",
    "development": "dev developments",
    "investment": "investments invest investors",
    "technology": "technologies tech technologie",
    "electronic": "electronics electronica electronico electronicas electronicos",
    "center": "centre centro",
    "organization": "organisation organizations organisations organizacion",
    "bank": "banco banca banque",
    "export": "exports ihracat",
    "import": "imports imp ithalat",
    "exchange": "sarafi sarrafi",
    "insurance": "bimeh sigorta",
    # engine 2.5.0: Spanish, Portuguese, French, Italian and German forms, and derived words, of common words
    "agriculture": "agricultural agricola agricolas agricolo agricole agricultura agrar agraria",
    "machinery": "machine machines maquinaria macchine maschinen",
    "institute": "institut instituto istituto institutes",
    "foundation": "fundacion fundacao fondation fondazione stiftung",
    "transport": "transportes transporte transports transportation trasporti trans",
    "university": "universidad universidade universite universita universitat",
    "ministry": "ministerio ministere ministero",
    "national": "nacional nationale nazionale",
    "commercial": "comercial commerciale",
    "construction": "construccion construcciones constructora construtora constructions",
    "coastal": "coast",
    "saint": "sankt sainte",  # "Sankt-Peterburg" / "Saint Petersburg"
}.items() for w in words.split()}
# The same words in Persian and Turkish, as Iranian and Turkish companies are listed under both ("SARAFI ANSAR"
# / "ANSAR EXCHANGE", "BIMEH IRAN" / "IRAN INSURANCE"): translations, like "banco" / "bank" above.
ORG_WORDS.update({w: canon for canon, words in {
    "industry": "sanaye sanayi sanat", "trade": "tejarat ticaret", "service": "khadamat",
    "development": "tosee toseh", "engineering": "mohandesi muhendislik", "investment": "yatirim",
    "shipping": "kashtirani denizcilik",
}.items() for w in words.split()})
_PHRASE_LENGTHS = sorted({len(k) for k in LEGAL_FORM_PHRASES}, reverse=True)
LEGAL_FORM_SEQUENCES = (("de", "cv"), ("de", "rl"), ("de", "rl", "de", "cv"), ("s", "de", "rl", "de", "cv"),
                        ("s", "de", "rl"), ("s", "a"), ("s", "l"),
                        ("s", "r", "l"), ("b", "v"), ("n", "v"), ("l", "l", "c"), ("co", "ltd"), ("y", "cia"))

PERSON = "Person"
AIRPLANE = "Airplane"
ORG_SCHEMAS = ("Organization", "Company", "LegalEntity")


@lru_cache(maxsize=65536)
def ascii_fold(text: str) -> str:
    """Any script to lowercase ASCII: NFKC, transliteration, case folding."""
    text = unicodedata.normalize("NFKC", text)
    return anyascii(text).lower()


def is_latin(text: str) -> bool:
    """True when the text has no letters outside the Latin script (accents allowed)."""
    for ch in text:
        if ch.isalpha() and ord(ch) > 0x24F:
            return False
    return True


def reorder_last_first(name: str) -> str:
    """"LAST, First" -> "First LAST". A single comma followed by a suffix ("SMITH, Jr") is left alone."""
    pieces = [p.strip() for p in name.split(",")]
    if len(pieces) == 3 and all(t in SUFFIXES for t in _SPLIT.split(ascii_fold(pieces[1]).replace(".", "")) if t):
        pieces = [f"{pieces[0]} {pieces[1]}", pieces[2]]  # "KNOWLES, JR., Samuel"
    if len(pieces) != 2:
        return name
    last, first = pieces
    if not last or not first:
        return last or first
    first_tokens = _SPLIT.split(ascii_fold(first).replace(".", ""))
    if all(t in TITLES or t in SUFFIXES or not t for t in first_tokens):
        return f"{last} {first}"
    return f"{first} {last}"


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xAC00 <= o <= 0xD7AF or 0x20000 <= o <= 0x2A6DF
            or 0xF900 <= o <= 0xFAFF)


_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def _cjk_tokens(run: str) -> str:
    """A run of Han or Hangul syllables written without spaces ("金正恩") as family name + given name
    ("jin zhengen"): the given name is one token, and the matcher's joined units let it meet a listed
    name that writes the syllables apart ("Zheng En")."""
    syllables = [anyascii(ch).lower() for ch in run]
    syllables = [s for s in syllables if s]
    if len(syllables) <= 1:
        return " ".join(syllables)
    if len(syllables) == 4:  # two-syllable family names are rare; four syllables: 2 + 2 is likelier
        return f" {''.join(syllables[:2])} {''.join(syllables[2:])} "
    return f" {syllables[0]} {''.join(syllables[1:])} "


@lru_cache(maxsize=65_536)
def _word_tokens(word: str) -> tuple[bool, tuple[str, ...], str | None]:
    """What `_clean_words` reads of one word of a name that is not all ASCII, wherever it stands: whether it is
    written in Latin script, its tokens (transliterated, folded) and the title or suffix it is when it is one
    written in another script (`_SCRIPT_WORDS`). Cached: names share their words (a million listed names hold
    a few hundred thousand distinct words)."""
    latin = is_latin(word)
    if not latin and _CJK_RUN.search(word):
        folded = _CJK_RUN.sub(lambda m: _cjk_tokens(m.group(0)), word)
        folded = anyascii(folded).lower()
    else:
        folded = ascii_fold(_HAMZA_SEATS.sub("ء", word) if not latin else word)
    folded = _DROP.sub(" ", _JOINERS.sub("", folded))
    known = None if latin else _SCRIPT_WORDS.get(SCRIPT_MARKS.sub("", word))
    return latin, tuple(t for t in _SPLIT.split(folded) if t), known


def _clean_words(text: str) -> list[tuple[str, bool]]:
    """(token, written in Latin script) pairs."""
    if text.isascii():  # most listed names: no normalization or transliteration to do
        folded = _DROP.sub(" ", _JOINERS.sub("", text.replace("&", " and ").lower()))
        return [(t, True) for t in _SPLIT.split(folded) if t]
    text = unicodedata.normalize("NFKC", text)
    out: list[tuple[str, bool]] = []
    words = text.replace("&", " and ").split()  # "A & M" is "A and M"
    for n, word in enumerate(words):
        latin, pieces, known = _word_tokens(word)
        last = n == len(words) - 1
        if known and ((last and known in SUFFIXES) or (known in TITLES and all(t in TITLES for t, _ in out))):
            out.append((known, True))  # at the start (a title) or at the end (a suffix) only
            continue
        for i, t in enumerate(pieces):
            if not latin and last and i == len(pieces) - 1 and t in _SCRIPT_SUFFIXES:
                out.append((_SCRIPT_SUFFIXES[t], True))  # "Буш-младший": Bush Jr.
            elif not latin and len(t) >= 6 and t[:3] in _ABD_ABU_AL and not _VOWEL_RE.search(t):
                out.extend(((t[:2], latin), (t[2:], latin)))  # "bdlhlym", عبدالحليم: "bd lhlym" (engine 3.1.0)
            elif t:
                out.append((t, latin))
    return out


# "Abd al-" and "Abu al-" written as one word with the name after them, as Arabic script often does ("عبدالحليم",
# "bdlhlym"): Latin writes "Abd al-Halim" or "Abdelhalim", so the part is read as two, "bd" and "lhlym" (engine
# 3.1.0); written together again, they still meet "Abdelhalim".
_ABD_ABU_AL = ("bdl", "bwl")
_VOWEL_RE = re.compile("[aeiou]")


# Words other scripts write before or after a name as Latin writes a title or a suffix, read as that Latin word
# (TITLES, SUFFIXES) where a person's name drops it, at its start or its end, and only there ("آل الشيخ", Al
# ash-Sheikh, is a family; engine 3.4.0): the titles of Arabic, Persian and Pashto names (حاجی "Haji", ملا "Mullah",
# مولوی "Mawlawi", شيخ "Sheikh", قاری "Qari": "ملا محمد عمر" is "Mullah Mohammed Omar", which lists write "Mohammed
# Omar"); "junior" and "senior": Arabic الابن ("the son": "جورج بوش الابن", George Bush Jr.) and الأب ("the
# father"), Russian and Ukrainian младший / молодший and старший. The Arabic words are known by their letters:
# their transliteration ("lbn") is also that of البنا, "al-Banna".
_SCRIPT_WORDS = {
    **dict.fromkeys(("حاجی", "حاجي", "حاجى", "الحاج"), "haji"), "ملا": "mullah",
    **dict.fromkeys(("مولوی", "مولوي"), "mawlawi"), "مولانا": "maulana",
    **dict.fromkeys(("شيخ", "شیخ", "الشيخ", "الشیخ"), "sheikh"), **dict.fromkeys(("قاری", "قاري"), "qari"),
    **dict.fromkeys(("الدكتور", "دكتور"), "dr"),
    **dict.fromkeys(("الابن", "الإبن", "الأبن"), "jr"), "الأب": "sr",
}
_SCRIPT_SUFFIXES = {"mladshiy": "jr", "molodshiy": "jr", "starshiy": "sr"}
# Marks a word in Arabic or Hebrew script may carry that do not change which word it is: harakat, tatweel, Hebrew
# points, zero-width joiners (`_SCRIPT_WORDS`, `vowelling.reading`)
SCRIPT_MARKS = re.compile("[\u064b-\u065f\u0670\u0640\u05b0-\u05c7\u200c\u200d]")

# A hamza on a seat (ئ on a yeh, ؤ on a waw) is written as the bare hamza (ء, an apostrophe the tokens drop): the
# seat says how the hamza is spelled, not a vowel to read, and anyascii writes it "i'" / "u'", so that "مطمئن"
# ("mtmi'n", Motmaen), "وائل" ("wi'l", Wael) or "هائل" (Hayel) read as parts with a vowel and miss the
# consonant rules of parts written in an abjad (engine 3.4.0: "mtmn", "wl", "hl").
_HAMZA_SEATS = re.compile("[ئؤ]")


def _is_abjad(word: str) -> bool:
    """A word written in Arabic (Persian, Urdu) or Hebrew script."""
    return any("\u0590" <= ch <= "\u06ff" or "\u0750" <= ch <= "\u077f" or "\u08a0" <= ch <= "\u08ff"
               for ch in word)


@lru_cache(maxsize=4096)
def abjad_words(text: str) -> tuple[tuple[str, str], ...]:
    """(part, word) for each word of a name written in Arabic, Persian or Hebrew script that is one part once
    transliterated ("علي" -> "ly"): what `vowelling` reads a short part's vowels from (engine 3.3.0). () for a
    name in Latin letters."""
    if text.isascii():
        return ()
    out = []
    for word in unicodedata.normalize("NFKC", text).split():
        if _is_abjad(word):
            parts = _clean(word)
            if len(parts) == 1:
                out.append((parts[0], "".join(ch for ch in word if unicodedata.category(ch)[0] in "LM")))
    return tuple(out)


def _clean(text: str) -> list[str]:
    return [t for t, _ in _clean_words(text)]


def name_words(text: str) -> tuple[str, ...]:
    """Every word of a name, folded, with nothing dropped (no titles, legal forms or reordering)."""
    return tuple(_clean(text))


# Legal forms long enough that a one-letter typo of one ("COMPANNY", "LIMIED") is still recognisable.
_LONG_LEGAL_FORMS = tuple(sorted(f for f in LEGAL_FORMS if len(f) >= 6))


def _is_legal_form(token: str) -> bool:
    if token in LEGAL_FORMS or undouble(token) in LEGAL_FORMS:  # "LTTD", "S.AA."
        return True
    if len(token) < 6:
        return False
    from rapidfuzz.distance import OSA
    return any(OSA.distance(token, form, score_cutoff=1) <= 1 for form in _LONG_LEGAL_FORMS
               if abs(len(form) - len(token)) <= 1 and form[0] == token[0])


# (position, the phrase without the word there) -> [(that word, the form)]: one look-up per word of the name
_PHRASES_BUT_ONE: dict[tuple[int, tuple[str, ...]], list[tuple[str, str]]] = {}
for _phrase, _form in LEGAL_FORM_PHRASES.items():
    for _j, _word in enumerate(_phrase):
        _PHRASES_BUT_ONE.setdefault((_j, _phrase[:_j] + _phrase[_j + 1:]), []).append((_word, _form))


_PHRASE_WORDS = frozenset(w for phrase in LEGAL_FORM_PHRASES for w in phrase)


def _phrase_with_typo(words: tuple[str, ...]) -> str | None:
    """The legal form written out in `words` with one typing error in one word ("JOINT-STOKC COMPANY"):
    the other words as written, the word with the error 5+ letters long, or 7+ in a phrase of two words
    ("SOCIEDAD ANONIMA" is too short to tell a typo from another word)."""
    for j, w in enumerate(words):
        for p, form in _PHRASES_BUT_ONE.get((j, words[:j] + words[j + 1:]), ()):
            if len(p) >= (5 if len(words) >= 3 else 7) and w != p and w.isalpha() and _one_typo(w, p):
                return form
    return None


def _legal_form_phrases(tokens: list[str]) -> list[str]:
    out: list[str] = []
    # how many of the first k tokens are words of a written-out legal form: a phrase with a typo needs all
    # its words but one to be such words (most names have none)
    known = [0]
    for t in tokens:
        known.append(known[-1] + (t in _PHRASE_WORDS))
    if known[-1] == 0:
        return list(tokens)
    i = 0
    while i < len(tokens):
        for n in _PHRASE_LENGTHS:
            words = tuple(tokens[i:i + n])
            form = LEGAL_FORM_PHRASES.get(words) or (
                len(words) == n and known[i + n] - known[i] >= n - 1 and _phrase_with_typo(words))
            if form:
                out.append(form)
                i += n
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


def _latin_form_typo(tokens: list[str]) -> int:
    """How many trailing tokens are the "de C.V." / "de R.L." of a Latin-American legal form ("S.A. DE C.V.",
    "S. DE R.L.") written with a typo in its last letters ("S.A. DE C..", "S.A. DE C.T.", "S.A. DE C..V"):
    "de" after "sa", "s" or "rl", then one or two tokens of three letters at most within one edit of "cv"
    or "rl". 0 when they are not."""
    for n in (1, 2):
        if len(tokens) < n + 3 or tokens[-n - 1] != "de" or tokens[-n - 2] not in ("sa", "s", "rl"):
            continue
        tail = "".join(tokens[-n:])
        if len(tail) <= 3 and tail.isalpha() and any(OSA.distance(tail, f) <= 1 for f in ("cv", "rl")):
            return n + 1
    return 0


def _strip_legal_forms(tokens: list[str]) -> list[str]:
    if len(tokens) <= 1:
        return tokens
    out = _legal_form_phrases(tokens)
    changed = True
    while changed and len(out) > 1:
        changed = False
        for seq in sorted(LEGAL_FORM_SEQUENCES, key=len, reverse=True):
            n = len(seq)
            if len(out) > n and tuple(out[-n:]) == seq:
                out = out[:-n]
                changed = True
                break
        if not changed and len(out) > 1 and _is_legal_form(out[-1]):
            out = out[:-1]
            changed = True
        if not changed and len(out) > 3:
            cut = _latin_form_typo(out)
            if cut:
                out = out[:-cut]
                changed = True
    # A legal form at the front ("OOO Romashka", "PT Maju") is dropped too.
    while len(out) > 1 and out[0] in {"ooo", "oao", "zao", "pao", "ao", "pt", "cv", "tov", "jsc", "pjsc", "ojsc",
                                      "cjsc", "llc", "sa"}:
        out = out[1:]
    return out or tokens


# A word of an organization's name one typing error away from a known organization word of 7+ letters
# ("INDUSRTIAL", "SEVICES", "AIRWAAYS") reads as that word, first letter kept: at that length one edit
# rarely makes another word. One vowel written for another does make one ("SHOPPING" / "SHIPPING",
# "EXPERTS" / "EXPORTS"): not a typo of it. Shorter forms ("INVEST" / "INOVEST", "BANQUE" / "BASQUE") are
# read only as written.
ORG_WORD_TYPO_MIN_LEN = 7
_VOWELS = frozenset("aeiou")


def deletes1(token: str) -> set[str]:
    """The token less any one letter: two tokens one edit apart share one of these, or one is the other's
    (SymSpell). The screening index files listed parts under them too."""
    return {token[:i] + token[i + 1:] for i in range(len(token))}


def _deletes(word: str) -> set[str]:
    """The word and the word less any one letter."""
    return {word} | deletes1(word)


_LONG_ORG_WORDS: dict[str, set[str]] = {}  # a long organization word, or it less one letter -> the words
for _w in {w for pair in ORG_WORDS.items() for w in pair if len(w) >= ORG_WORD_TYPO_MIN_LEN}:
    for _d in _deletes(_w):
        _LONG_ORG_WORDS.setdefault(_d, set()).add(_w)


def _one_typo(token: str, word: str) -> bool:
    """`token` is `word` with one typing error (a letter added, dropped, changed, or two swapped; a doubled
    letter undone counts as none), its first letter kept, and no vowel written for another."""
    if token[0] != word[0] or abs(len(token) - len(word)) > 1:
        return False
    if OSA.distance(token, word, score_cutoff=1) > 1:
        return False
    if len(token) == len(word):
        diff = [(a, b) for a, b in zip(token, word) if a != b]
        if len(diff) == 1 and diff[0][0] in _VOWELS and diff[0][1] in _VOWELS:
            return False
    return True


@lru_cache(maxsize=65536)
def _org_word(token: str) -> str:
    found = ORG_WORDS.get(token) or ORG_WORDS.get(undouble(token))
    if found:
        return found
    if len(token) >= ORG_WORD_TYPO_MIN_LEN - 1 and token.isalpha():
        bare = undouble(token)
        found = {w for d in _deletes(token) | _deletes(bare) for w in _LONG_ORG_WORDS.get(d, ())}
        for word in sorted(found):
            if _one_typo(token, word) or (bare != token and _one_typo(bare, word)):
                return ORG_WORDS.get(word, word)
    return token


# Numbers in an organization's name, written in figures, as an ordinal ("43rd", "3e", "2o") or in words in the
# lists' languages ("Seventeen", "Forty-Third", "dix-sept", "setenta y seis", "einundzwanzig"), or as a Roman
# numeral after the name ("Fund II"), read as one number in figures (engine 3.0.0): "Regiment 17" is
# "Regiment Seventeen", and a number that differs caps the score as before ("Fund II" / "Fund III").
NUMBER_LANGS = ("en", "fr", "es", "de", "it", "pt")
_ORDINAL_FIGURE = re.compile(r"^(\d+)(?:st|nd|rd|th|e|er|re|eme|ieme|o|a|ro|do|to|vo|no|mo|te|ten)$")
_ROMAN = re.compile(r"^(?=[ivx]{2,})(x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}


def build_number_words() -> dict[tuple[str, ...], str]:
    """{the words of a number 1..99, cardinal or ordinal, in NUMBER_LANGS: the number in figures}, by num2words
    (LGPL-2.1). "One" and the other words for 1 but "first" are left out (the article "un", "uno", "ein";
    "Premier Bank"), and so are numbers of one word that is a particle of names ("dos", Portuguese "of the").
    num2words loads every language it has (44 MB a process), so the table is written once into
    `number_words_table.py` (`python -m app.screening.normalize`) and a test checks it against num2words."""
    from num2words import num2words

    table: dict[tuple[str, ...], str] = {}
    for lang in NUMBER_LANGS:
        for n in range(1, 100):
            for kind in ("cardinal", "ordinal"):
                if n == 1 and not (lang == "en" and kind == "ordinal"):
                    continue
                try:
                    words = tuple(_clean(num2words(n, to=kind, lang=lang)))
                except (NotImplementedError, KeyError, ValueError):  # pragma: no cover - a language's gap
                    continue
                if words and not (len(words) == 1 and words[0] in _NUMBER_WORD_EXCLUDED):
                    table.setdefault(words, str(n))
    return table


@lru_cache(maxsize=1)
def number_words() -> tuple[dict[tuple[str, ...], str], int]:
    """The table of `build_number_words` (as written into `number_words_table.py`), and the most words one
    number takes."""
    from app.screening.number_words_table import NUMBER_WORDS

    table = {tuple(words.split()): figure for words, figure in NUMBER_WORDS.items()}
    return table, max(len(k) for k in table)


_NUMBER_WORD_EXCLUDED = frozenset("dos do da de di del un une uno una ein eine et e y".split())


def numbers_as_figures(tokens: list[str]) -> list[str]:
    """An organization's tokens with numbers in words, ordinal figures and trailing Roman numerals as figures."""
    table, longest = number_words()
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        m = _ORDINAL_FIGURE.match(t) if t[:1].isdigit() else None
        if m:
            out.append(str(int(m.group(1))))
            i += 1
            continue
        for n in range(min(longest, len(tokens) - i), 0, -1):
            figure = table.get(tuple(tokens[i:i + n]))
            if figure:
                out.append(figure)
                i += n
                break
        else:
            out.append(t)
            i += 1
    if len(out) >= 2 and (_ROMAN.match(out[-1]) or out[-1] in ("i", "v")) and not out[-2].isdigit():
        out[-1] = str(_roman_value(out[-1]))
    return out


def _roman_value(numeral: str) -> int:
    total = 0
    for ch, nxt in zip(numeral, numeral[1:] + " "):
        v = _ROMAN_VALUES[ch]
        total += -v if nxt != " " and _ROMAN_VALUES[nxt] > v else v
    return total


@lru_cache(maxsize=262144)
def name_tokens(name: str, schema: str = PERSON) -> tuple[str, ...]:
    """The comparable tokens of a name, in natural order."""
    if not name:
        return ()
    text = name.strip()
    if schema == PERSON:
        text = reorder_last_first(text)
    words = _clean_words(text)
    tokens = [t for t, _ in words]
    if schema == PERSON:
        start, end = 0, len(words)
        while start < end - 1 and words[start][1] and words[start][0] in TITLES:
            start += 1
        while end - 1 > start and words[end - 1][1] and words[end - 1][0] in SUFFIXES:
            end -= 1
        tokens = tokens[start:end]
        if "of" in tokens:
            tokens = _english_links(tokens)
    elif schema in ORG_SCHEMAS:
        tokens = [_org_word(t) for t in numbers_as_figures(_strip_legal_forms(tokens))]
    elif schema == AIRPLANE and tokens:
        # a registration mark or serial number: one identifier, however it is spaced ("EP-MOM", "EPMOM")
        tokens = ["".join(tokens)]
    return tuple(tokens)


# "Abd al-" and "Abu al-" and the name after them, as three words ("Abd al-Aziz", "Abu al-Hasan") or one ("Abdulaziz",
# "Abdelaziz", "Abulhasan", "Abdurrahman": the article's "l" taken by a sun letter); "Abdullah", "Abdulla" are
# "Abd Allah" (`THEOPHORIC_SUFFIXES`), not "Abd al-" and a name (engine 3.5.0)
_THEOPHORIC_JOINED = re.compile(r"(abd|abu)(?:[aeiou]?l|[aeiou](?=([dnrstz])\2))([a-z]{3,})")
_THEOPHORIC_ARTICLE = frozenset(("al", "el", "ul", "ol", "il"))
_THEOPHORIC_JOIN = {"abd": "abdul", "abu": "abul"}  # the English-language lists' spelling of the joined word


def theophoric_variants(tokens: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A person's name with "Abd al-"/"Abu al-" and the name after it written the other way: the three words joined
    as English-language lists write them ("abd al aziz" -> "abdulaziz", "abu al hasan" -> "abulhasan"), and a
    joined word split in three ("abdelkader", "abdurrahman" -> "abd al kader", "abd al rahman"); [] when the name
    has neither. A query screens each as a name of its own: the lists write one person either way."""
    if not any(t[:2] == "ab" for t in tokens):
        return []  # (most names: one pass over the parts)
    joined: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if t in _THEOPHORIC_JOIN and i + 2 < n and tokens[i + 1] in _THEOPHORIC_ARTICLE and \
                len(tokens[i + 2]) >= 3 and tokens[i + 2].isalpha():
            joined.append(_THEOPHORIC_JOIN[t] + tokens[i + 2])
            i += 3
            continue
        joined.append(t)
        i += 1
    split: list[str] = []
    for t in tokens:
        m = _THEOPHORIC_JOINED.fullmatch(t)
        rest = (m.group(3)[1:] if m.group(2) else m.group(3)) if m else ""  # "rrahman": the sun letter doubled
        if len(rest) >= 3 and rest not in ("lah", "llah", "lahi", "llahi"):  # "Abdullah": "Abd Allah"
            split += [m.group(1), "al", rest]
        else:
            split.append(t)
    return [v for v in (tuple(joined), tuple(split)) if v != tokens]


# "son of" and "daughter of" between two names, as English-language lists translate the link of a nasab ("Abdul Haq
# son of Anwar Khan", ولد / بن), are that link: "bin", "bint" (engine 3.2.0)
_ENGLISH_LINKS = {"son": "bin", "daughter": "bint"}


def _english_links(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if 0 < i and i + 2 < len(tokens) and tokens[i + 1] == "of" and tokens[i] in _ENGLISH_LINKS:
            out.append(_ENGLISH_LINKS[tokens[i]])
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


_BRACKETS = re.compile(r"\(([^()]*)\)")
# "WWW.NAME.TLD[.CC]", or "NAME.COM" (and .net, .org, .info, .biz) with an optional country code
_WEBSITE = re.compile(r"www\.([a-z0-9][a-z0-9-]*)(?:\.[a-z]{2,4})+|([a-z0-9][a-z0-9-]*)\.(?:com|net|org|info|biz)"
                      r"(?:\.[a-z]{2})?", re.I)


def qualifiers(text: str) -> set[str]:
    """The bracketed remarks or qualifiers of a name (not a name in another script, not the acronym of the
    rest), folded: "Bank of Yunnan (Paris) S.A." -> {"paris"}."""
    out = set()
    for piece in text.split(";"):
        bare = " ".join(_BRACKETS.sub(" ", piece).split())
        for part in (p.strip() for p in _BRACKETS.findall(piece)):
            if part and is_latin(part) and not is_acronym_of(part, bare):
                out.add(" ".join(_clean(part)))
    return out


def name_variants(text: str, keep_bare: bool = True) -> list[str]:
    """The names one written name stands for: the parts of "A; B", and a name with a bracketed part read
    with it, without it, and the bracketed part alone when it is the name in another script or the acronym
    of the rest ("Jin Tiesan (金铁三)", "AL-QAIDA IN THE ARABIAN PENINSULA (AQAP)"); other brackets are
    remarks or qualifiers ("(birth name)", "(U.K.)") and only dropped. `keep_bare=False`: never without its
    brackets (two names whose qualifiers differ: "(Paris)" / "(Tokyo)", engine 3.0.0)."""
    out: list[str] = []
    for piece in text.split(";"):
        piece = piece.strip()
        if not piece:
            continue
        out.append(piece)
        site = _WEBSITE.fullmatch(piece)
        if site:  # a company's web address listed as its name: "WWW.SERCUBA.COM" is "SERCUBA"
            out.append((site.group(1) or site.group(2)).replace("-", " "))
        inner = _BRACKETS.findall(piece)
        if not inner:
            continue
        bare = " ".join(_BRACKETS.sub(" ", piece).split())
        if bare and keep_bare:
            out.append(bare)
        for part in (p.strip() for p in inner):
            if part and (not is_latin(part) or is_acronym_of(part, bare)):
                out.append(part)
    return list(dict.fromkeys(out)) or [text]


def is_acronym_of(short: str, name: str) -> bool:
    """`short` is one word of 2+ letters made of the initials of the words of `name`, counted with or
    without its filler words ("NITC" / "National Iranian Tanker Company", "AQAP" / "Al-Qaida in the
    Arabian Peninsula"), legal forms left out ("BID" / "Banco Internacional de Desarrollo, C.A."), or, from 5
    letters, of the beginnings of its words ("MODLEX" / "Ministry of Defense Logistics Export", "IASCO" /
    "Iran Alloy Steel Company"; see `_is_syllabic_acronym`)."""
    words = _clean(name)
    if len(short.split()) == 1:
        token = "".join(_clean(short))
    else:
        # "LAPA S.A.S." / "Linea Aerea Pueblos Amazonicos S.A.S.": one word and the legal form the name has
        short_words = _clean(short)
        token = short_words[0]
        if len(short_words) < 2 or not all(w in _ACRONYM_SKIPPED and w in words for w in short_words[1:]):
            return False
    if len(token) < 2 or not token.isalpha() or len(words) < 2:
        return False
    return token in ("".join(w[0] for w in words), "".join(w[0] for w in words if w not in _FILLERS),
                     "".join(w[0] for w in words if w not in _FILLERS or w in ("al", "el"))) or (
        _is_syllabic_acronym(token, tuple(words), 1 if len(token) < SYLLABIC_ACRONYM_MIN_LEN else len(token)))


SYLLABIC_ACRONYM_MIN_LEN = 5  # shorter acronyms take one letter a word ("NADA" is not NAtional Defense Academy)
# Words an acronym may leave out: filler words and single letters (it may also take their first letter),
# "company" and its short forms (it may take "c" or "co": "IASCO"), other legal forms, and the
# Latin-American company forms the lists write apart ("C.A.", "CIA", "S.C.S.", "S. DE R.L."). Trading,
# group and international are legal forms to the name's matcher but words of the name to an acronym.
_ACRONYM_COMPANY = frozenset("company co corporation corp".split())
_ACRONYM_SKIPPED = (LEGAL_FORMS | frozenset("ca cia scs sprl rl".split())) - frozenset(
    "trading international intl group".split())


@lru_cache(maxsize=65536)
def _is_syllabic_acronym(token: str, words: tuple[str, ...], most: int) -> bool:
    """`token` is the beginnings of the name's words written together, in order, with at most `most`
    letters of each and at least one of each word that says something ("HOTINCOL" / "HOTeles e INmuebles
    de COLombia LTDA", "FINCIMEX" / "FINanciera CIMEX S.A", "ISIRAN" / "Information Systems IRAN", "BID" /
    "Banco Internacional de Desarrollo, C.A."). Latin-American and Iranian companies are often listed under
    such a name beside the full one. Two words that say something at least: one word's beginning is only a
    shorter word."""
    limits = []  # (least, most) letters the acronym takes from each word
    for w in words:
        if len(w) == 1 or w in _FILLERS:
            limits.append((0, 1))
        elif w in _ACRONYM_COMPANY:
            limits.append((0, 2))
        elif w in _ACRONYM_SKIPPED:
            limits.append((0, 0))
        else:
            limits.append((1, most))
    if sum(least for least, _ in limits) < 2:
        return False
    n = len(token)
    reach = {0}  # the token's prefix lengths the words so far can spell
    for word, (least, top) in zip(words, limits):
        nxt = set(reach) if least == 0 else set()
        for i in reach:
            k = 0
            while i + k < n and k < len(word) and k < top and token[i + k] == word[k]:
                k += 1
                nxt.add(i + k)
        reach = nxt
        if not reach:
            return False
    return n in reach


_FILLERS = frozenset("al el the of and for in on de del la le les du des da do dos di und der die das y e et"
                     .split())


def normalize_name(name: str, schema: str = PERSON) -> str:
    return " ".join(name_tokens(name, schema))


@lru_cache(maxsize=200_000)
def undouble(token: str) -> str:
    """The token with every doubled (or longer) letter written once ("mohammad" -> "mohamad"). A loop over the
    letters: three times as fast as a substitution with a back-reference, on parts of a few letters."""
    out = []
    prev = ""
    for ch in token:
        if ch != prev:
            out.append(ch)
            prev = ch
    return "".join(out)


# --- dates -------------------------------------------------------------------------------------------

_YEAR = re.compile(r"^\d{4}$")
_YEAR_MONTH = re.compile(r"^(\d{4})[-/.](\d{1,2})$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_PREFIX = re.compile(r"^(circa|approximately|approx\.?|about|around|ca\.?|c\.)\s*")
_SENTINELS = (datetime(2001, 1, 1), datetime(2002, 2, 2))  # two defaults: what the text does not say differs


def parse_date(value: str | None) -> str | None:
    """A date to an ISO prefix: "1972", "1972-03" or "1972-03-04"; None when the text is not a date.

    Strict: python-dateutil parses the text without fuzzy matching (so "unknown", "12 apples" or a
    month 13 give None), with the day first when a numeric date is ambiguous ("02/11/1972" is 2 November);
    a part the text does not give (year only, month and year) is left out rather than invented."""
    if not value:
        return None
    text = _PREFIX.sub("", value.strip().lower().rstrip(".")).strip()
    if not text:
        return None
    if _YEAR.match(text):
        return _iso(int(text), None, None)
    m = _YEAR_MONTH.match(text)
    if m:
        return _iso(int(m.group(1)), int(m.group(2)), None) if 1 <= int(m.group(2)) <= 12 else None
    m = _ISO_DATE.match(text)
    if m:  # "1972-03-04", what the API sends: the calendar decides, as dateutil would (Feb 30 is no date)
        try:
            return _iso(*date(int(m.group(1)), int(m.group(2)), int(m.group(3))).timetuple()[:3])
        except ValueError:
            return None
    if not re.search(r"\d{4}", text):
        return None  # a two-digit year is too ambiguous for a date of birth
    try:
        yearfirst = bool(re.match(r"^\d{4}", text))  # ISO order: year, month, day
        a, b = (dateparser.parse(text, default=d, dayfirst=not yearfirst, yearfirst=yearfirst)
                for d in _SENTINELS)
    except (ValueError, OverflowError, TypeError):
        return None
    if a.year != b.year:
        return None
    month = a.month if a.month == b.month else None
    day = a.day if a.day == b.day and month is not None else None
    return _iso(a.year, month, day)


def _iso(y: int, m: int | None, d: int | None) -> str | None:
    if not 1800 <= y <= 2200:
        return None
    if m is None or not 1 <= m <= 12:
        return f"{y:04d}"
    if d is None or not 1 <= d <= 31:
        return f"{y:04d}-{m:02d}"
    return f"{y:04d}-{m:02d}-{d:02d}"


# --- countries ---------------------------------------------------------------------------------------

_COUNTRY_OVERRIDES = {
    "russia": "ru", "iran": "ir", "syria": "sy", "korea north": "kp", "north korea": "kp", "dprk": "kp",
    "korea south": "kr", "south korea": "kr", "korea": "kr", "burma": "mm", "laos": "la", "vietnam": "vn",
    "palestinian": "ps", "possibly palestinian": "ps", "palestine": "ps", "kosovo": "xk",
    "turkey": "tr", "turkiye": "tr", "ivory coast": "ci", "cote d ivoire": "ci", "the gambia": "gm",
    "gambia": "gm", "congo democratic republic of the": "cd", "democratic republic of the congo": "cd",
    "drc": "cd", "congo": "cg", "republic of the congo": "cg", "macedonia": "mk",
    "macedonia the former yugoslav republic of": "mk", "czech republic": "cz", "usa": "us", "us": "us",
    "united states of america": "us", "america": "us", "uk": "gb", "great britain": "gb", "england": "gb",
    "britain": "gb", "bolivia": "bo", "venezuela": "ve", "tanzania": "tz", "moldova": "md",
    "swaziland": "sz", "cape verde": "cv", "cabo verde": "cv", "brunei": "bn", "micronesia": "fm",
    "vatican": "va", "holy see": "va", "taiwan": "tw", "hong kong": "hk", "macau": "mo", "macao": "mo",
    "east timor": "tl", "timor leste": "tl", "west bank": "ps", "gaza": "ps", "gaza strip": "ps",
    "uae": "ae", "emirates": "ae", "saint kitts and nevis": "kn", "st kitts and nevis": "kn",
    "bosnia": "ba", "herzegovina": "ba", "netherlands antilles": "an", "yugoslavia": "rs",
    "serbia and montenegro": "rs", "soviet union": "ru", "ussr": "ru", "former soviet union": "ru",
    "state of palestine": "ps", "region crimea": "ua", "region gaza": "ps", "region northern mali": "ml",
}


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    """Normalized country names (official, common and short) -> alpha-2 code, built once."""
    import pycountry
    names: dict[str, str] = {}
    for country in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            name = getattr(country, attr, None)
            if name:
                names.setdefault(" ".join(_clean(name)), country.alpha_2.lower())
    return names


@lru_cache(maxsize=4096)
def country_code(value: str | None) -> str | None:
    """An ISO 3166-1 alpha-2 code (lowercase) for a code or a country name; None when unknown."""
    if not value:
        return None
    text = value.strip()
    if len(text) == 2 and text.isalpha():
        import pycountry
        code = text.upper()
        if code in ("UK",):
            return "gb"
        if code == "XK" or pycountry.countries.get(alpha_2=code):
            return code.lower()
        return None
    key = " ".join(_clean(text))
    key = re.sub(r"\b(the|republic of the|of the)\b$", "", key).strip()
    if key in _COUNTRY_OVERRIDES:
        return _COUNTRY_OVERRIDES[key]
    if len(text) == 3 and text.isalpha():
        import pycountry
        found = pycountry.countries.get(alpha_3=text.upper())
        if found:
            return found.alpha_2.lower()
    code = _country_names().get(key)
    if code:
        return code
    # "Iran (Islamic Republic of)", "Venezuela (Bolivarian Republic of)": the part before the bracket.
    head = re.split(r"[(,]", text)[0].strip()
    if head and head != text:
        return country_code(head)
    return None


if __name__ == "__main__":  # python -m app.screening.normalize: write number_words_table.py from num2words
    from pathlib import Path

    rows = "".join(f"    {' '.join(k)!r}: {v!r},\n" for k, v in sorted(build_number_words().items()))
    Path(__file__).with_name("number_words_table.py").write_text(
        '"""Numbers 1-99 in words in the lists\' languages, as num2words writes them (generated by\n'
        '`python -m app.screening.normalize`; tests/unit/screening/test_conventions.py checks it against\n'
        'num2words). Words joined by spaces: their figures."""\n\nNUMBER_WORDS = {\n' + rows + "}\n",
        encoding="utf-8")

"""Given names and their short forms (engine 3.0.0): "Bob" is Robert, "Misha" Mikhail, "Pepe" José.

Two sources: the `nicknames` dataset (MIT, hand-curated English names and their nicknames, ~2,700 pairs) and
the short forms below, which that English dataset lacks: the diminutives of Russian and other Slavic names and
the hypocorisms of Spanish, Portuguese, Italian and German names, as grammars of those languages give them.
Names are keyed by their spelling key (`similarity.spelling_key`: "Mikhail", "Michail", "Mihail" are one), so
a short form meets every romanization of its full name.

Only a direct relation counts: a short form against a full name it stands for ("Bob" / "Robert"), not two
short forms of one name ("Bob" / "Rob": another pair of people as often as not) nor two full names that share
a short form ("Robert" / "William", both "Bill" in the dataset). The table is built once per process, lazily
(`similarity.full_names_of`): ~4,000 keys, well under a megabyte.
"""
from __future__ import annotations

import csv
from functools import lru_cache

# full name: its short forms (lower case, ASCII as the engine folds them)
SHORT_FORMS = {
    # Russian, Ukrainian, Belarusian (the everyday diminutives)
    "aleksandr": "sasha sanya shura", "aleksandra": "sasha sanya shura", "aleksey": "alyosha lyosha lesha",
    "anatoly": "tolya", "andrey": "andryusha", "anna": "anya", "boris": "borya", "dmitry": "dima mitya",
    "yekaterina": "katya", "yelena": "lena", "yevgeny": "zhenya", "yevgenia": "zhenya", "galina": "galya",
    "grigory": "grisha", "ivan": "vanya", "irina": "ira", "konstantin": "kostya", "lev": "lyova",
    "lyudmila": "lyuda mila", "mariya": "masha", "mikhail": "misha", "nadezhda": "nadya", "natalya": "natasha",
    "nikolay": "kolya", "olga": "olya", "pavel": "pasha", "pyotr": "petya", "sergey": "seryozha", "svetlana": "sveta",
    "tatyana": "tanya", "vladimir": "volodya vova", "vyacheslav": "slava", "vladislav": "vlad slava",
    "yaroslav": "slava", "stanislav": "stas", "yury": "yura", "viktor": "vitya", "vasily": "vasya",
    "valentina": "valya", "valentin": "valya", "yevdokiya": "dusya", "fyodor": "fedya", "semyon": "syoma",
    "maksim": "maks", "roman": "roma", "arkady": "arkasha", "gennady": "gena", "innokenty": "kesha",
    "iosif": "osya", "oleksandr": "sashko", "volodymyr": "volodya",
    # Spanish and Portuguese
    "jose": "pepe pepito ze", "francisco": "paco pancho curro chico", "ignacio": "nacho", "dolores": "lola",
    "concepcion": "concha", "rosario": "charo", "guadalupe": "lupe", "jesus": "chucho chuy", "guillermo": "memo",
    "alberto": "beto", "roberto": "beto", "manuel": "manolo", "enrique": "quique", "eduardo": "lalo",
    "alfredo": "fredo", "antonio": "tono", "gregorio": "goyo", "mercedes": "merche", "consuelo": "chelo",
    "luis": "lucho", "rafael": "rafa", "santiago": "santi", "sebastian": "sebas", "fernando": "nando",
    "isabel": "chabela", "joaquim": "quim", "joao": "joca",
    # Italian
    "giuseppe": "beppe peppe pino", "luigi": "gigi", "salvatore": "toto", "antonino": "nino", "giovanni": "gianni",
    "francesco": "franco cecco", "domenico": "mimmo", "vincenzo": "enzo", "massimiliano": "max",
    # German
    "josef": "sepp seppl", "johann": "hans", "johannes": "hans", "friedrich": "fritz", "heinrich": "heinz",
    "wolfgang": "wolf", "matthias": "hias", "katharina": "kathi", "elisabeth": "lisl liesl",
}


@lru_cache(maxsize=1)
def short_form_pairs() -> tuple[tuple[str, str], ...]:
    """(full name, short form) pairs, lower case: the `nicknames` dataset's and SHORT_FORMS. `similarity` keys
    them by spelling key (`similarity.full_names_of`)."""
    import nicknames

    pairs: list[tuple[str, str]] = []
    with nicknames.with_names_csv_path() as path, open(path, encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["relationship"] == "has_nickname" and row["name1"] != row["name2"]:
                pairs.append((row["name1"], row["name2"]))
    for full, shorts in SHORT_FORMS.items():
        pairs.extend((full, short) for short in shorts.split())
    return tuple((f, s) for f, s in pairs if f.isalpha() and s.isalpha() and len(s) >= 2)

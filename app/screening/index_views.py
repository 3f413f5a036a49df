"""What an index hands out of a record or a name (`ScreeningIndex.records[i]`, `.name_tokens[n]`, ...): views over
its columns, the record itself decoded from its JSON line on first use. Each view holds the `ScreeningIndex` it
reads (its columns are the index's attributes; not imported here, as `index` imports these views).
"""
from __future__ import annotations

from app.screening.normalize import country_code
from app.screening.qualifiers import DateValue
from app.screening.records import NAME_KINDS, ListRecord


class LazyListRecord:
    """A listed record whose schema is at hand (a column); everything else is decoded on first use."""

    __slots__ = ("schema", "_index", "_i", "_full")

    def __init__(self, index, i: int, schema: str):
        self._index, self._i, self.schema, self._full = index, i, schema, None

    def full(self) -> ListRecord:
        if self._full is None:
            self._full = self._index._decode_record(self._i)
        return self._full

    @property
    def id(self) -> str:
        return self.full().id

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_index", "_i", "_full", "schema"):
            raise AttributeError(name)
        return getattr(self.full(), name)

    def __repr__(self) -> str:
        return repr(self.full())


class RecordView:
    """What `index.records[i]` returns: the listed record as the engine reads it (list, dates, countries, PEP and
    sanction flags), from columns or decoded on first use."""

    __slots__ = ("_index", "_i", "list_name", "is_pep", "is_sanctioned", "sanction_countries", "pep_countries",
                 "_record", "_extra")

    def __init__(self, index, i: int):
        self._index, self._i = index, i
        self.list_name = index._list_names[index._rec_list[i]]
        flags = index._rec_flags[i]
        self.is_pep, self.is_sanctioned = bool(flags & 1), bool(flags & 2)
        self.sanction_countries = index._country_sets[index._rec_sanc[i]]
        self.pep_countries = index._country_sets[index._rec_pep[i]]
        self._record = LazyListRecord(index, i, index._schemas[index._rec_schema[i]])
        self._extra: tuple | None = None

    @property
    def record(self) -> ListRecord:
        return self._record  # type: ignore[return-value]  (duck-typed: decoded on first use)

    def _details(self) -> tuple:
        if self._extra is None:
            record = self._record.full()
            dates = tuple(d for d in (DateValue.parse(v) for v in record.birth_dates) if d)
            countries = frozenset(c for c in (country_code(v) for v in record.countries) if c)
            self._extra = (dates, countries)
        return self._extra

    @property
    def dates(self) -> tuple[DateValue, ...]:
        return self._details()[0]

    @property
    def countries(self) -> frozenset[str]:
        return self._details()[1]


class Records:
    def __init__(self, index):
        self._index = index

    def __len__(self) -> int:
        return self._index._n_records

    def __getitem__(self, i: int) -> RecordView:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        cache = self._index._record_cache
        found = cache.get(i)
        if found is None:
            found = RecordView(self._index, i)
            cache.put(i, found, 600)  # ~ a view with its decoded record
        return found

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return len(self) > 0


class _PerName:
    """A column of the index's names, indexed by name id."""

    def __init__(self, index):
        self._index = index

    def __len__(self) -> int:
        return self._index._n_names


class NameTokens(_PerName):
    def __getitem__(self, name_id: int) -> tuple[str, ...]:
        ix = self._index
        text = ix.part_text
        return tuple(text(k) for k in ix._name_tok[ix._name_tok_offs[name_id]:ix._name_tok_offs[name_id + 1]])


class NameText(_PerName):
    def __getitem__(self, name_id: int) -> str:
        ix = self._index
        return bytes(ix._names_blob[ix._name_text_offs[name_id]:ix._name_text_offs[name_id + 1]]).decode()


class NameKind(_PerName):
    def __getitem__(self, name_id: int) -> str:
        return NAME_KINDS[self._index._name_kind[name_id]]


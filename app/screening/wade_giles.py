"""Chinese names in Wade-Giles and in pinyin (engine 3.0.0): "Teng Hsiao-ping" is "Deng Xiaoping", "Chiang
Kai-shek" "Jiang Jieshi", "Hsu" "Xu", "Tsai" "Cai". Taiwan, Hong Kong and older Western sources write
Wade-Giles, mostly without its apostrophes (so "Teng" may be "Deng" or "Teng"); lists write either.

The syllable table is pypinyin's (MIT; `pypinyin/style/wadegiles.py`, 420 syllables), read from its source
as data: importing pypinyin loads its character dictionaries, 50 MB a process, which this needs none of.
`other_romanizations(part)`: the pinyin a Wade-Giles part may stand for, and the Wade-Giles of a pinyin part,
each syllable by the table (a part of several syllables, "hsiaoping", segmented every way the table allows,
at most MAX_READINGS readings).
"""
from __future__ import annotations

import ast
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

MAX_READINGS = 8
MAX_LEN = 16


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """{Wade-Giles syllable without apostrophes or umlaut: its pinyin syllables}, and pinyin to Wade-Giles."""
    spec = importlib.util.find_spec("pypinyin")
    if spec is None or not spec.origin:  # pragma: no cover - a declared dependency
        return {}, {}
    tree = ast.parse((Path(spec.origin).parent / "style" / "wadegiles.py").read_text(encoding="utf-8"))
    pairs: list[tuple[str, str]] = []
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("_convert_table", "_except_table")):
            pairs += [tuple(p) for p in ast.literal_eval(node.value)]
    wg: dict[str, list[str]] = {}
    py: dict[str, list[str]] = {}
    for pinyin, wade in pairs:
        pinyin = pinyin.replace("v", "u").replace("ü", "u")
        wade = wade.replace("'", "").replace("ü", "u").replace("v", "u")
        wg.setdefault(wade, [])
        if pinyin not in wg[wade]:
            wg[wade].append(pinyin)
        py.setdefault(pinyin, [])
        if wade not in py[pinyin]:
            py[pinyin].append(wade)
    return {k: tuple(v) for k, v in wg.items()}, {k: tuple(v) for k, v in py.items()}


def _segment(token: str, table: dict[str, tuple[str, ...]]) -> list[str]:
    """Every reading of `token` as a run of syllables of `table`, each replaced by its equivalents."""
    out: list[str] = []

    def walk(i: int, acc: str) -> None:
        if len(out) >= MAX_READINGS:
            return
        if i == len(token):
            out.append(acc)
            return
        for j in range(min(len(token), i + 6), i, -1):
            for other in table.get(token[i:j], ()):
                walk(j, acc + other)

    walk(0, "")
    return out


# a run of romanized Chinese syllables, pinyin or Wade-Giles (a cheap test before the table's segmentation)
_SYLLABLES = re.compile(r"(?:(?:zh|ch|sh|hs|ts|tz|[bpmfdtnlgkhjqxrzcsyw])?(?:iang|iong|iung|uang|ang|eng|ing|ong|ung|"
                        r"ian|ien|iao|ieh|uai|uan|uei|ueh|ai|ei|ao|ou|an|en|in|un|ia|ie|ih|iu|ua|uo|ui|ue|ve|er|a|o|"
                        r"e|i|u|v))+")


@lru_cache(maxsize=65_536)
def syllabic(token: str) -> bool:
    """A part that is a run of romanized Chinese syllables ("xiaoping", "hsiao")."""
    return 2 <= len(token) <= MAX_LEN and _SYLLABLES.fullmatch(token) is not None


@lru_cache(maxsize=65_536)
def other_romanizations(token: str) -> frozenset[str]:
    """The same syllables in the other system (Wade-Giles <-> pinyin), the part itself left out."""
    if not syllabic(token):
        return frozenset()
    wg, py = _tables()
    found = set(_segment(token, wg)) | set(_segment(token, py))
    found.discard(token)
    return frozenset(found)


# The letters each syllable of the table keeps in the other system ("mien" / "mian", "feng" / "feng", "lung" /
# "long"): a reading of a part keeps them in their order
_KEPT = frozenset("flmnvw")
_NOT_KEPT = {c: None for c in range(128) if chr(c) not in _KEPT}


def chinese_kept(token: str) -> str | None:
    """The letters every reading of a run of romanized Chinese syllables keeps (`_KEPT`), in their order; None for
    a part that is not such a run. Two runs that keep different letters are no two spellings of one name."""
    return token.translate(_NOT_KEPT) if syllabic(token) else None


def same_chinese_name(a: str, b: str) -> bool:
    if a.translate(_NOT_KEPT) != b.translate(_NOT_KEPT):
        return False  # no reading of one is the other (`_KEPT`); the cheap test first
    return b in other_romanizations(a) or a in other_romanizations(b)

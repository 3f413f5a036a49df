"""The index's building blocks: string tables (strings found by a hash-bucket look-up, each with a list of int
values), byte-bounded caches and the sorted-array union, over numpy arrays that may be memory-mapped.
"""
from __future__ import annotations

import threading
import zlib
from typing import Any

import numpy as np


def sorted_union(arrays: list[np.ndarray]) -> np.ndarray:
    """The distinct values of sorted integer arrays, ascending. Faster than `np.unique` (which hashes): a
    stable sort of sorted runs merges them (timsort), and duplicates are neighbours afterwards."""
    if len(arrays) == 1:
        return arrays[0]
    merged = np.sort(np.concatenate(arrays), kind="stable")
    if len(merged) < 2:
        return merged
    first = np.empty(len(merged), dtype=bool)
    first[0] = True
    np.not_equal(merged[1:], merged[:-1], out=first[1:])
    return merged[first]


# --- bounded caches ---------------------------------------------------------------------------------------

class ByteBoundedCache:
    """A map whose entries carry an approximate size, bounded by `max_bytes`: two generations of at most half
    the budget each. New entries go to the young one; a hit in the old one moves the entry to the young one;
    when the young one is full it becomes the old one and the old one is dropped (an LRU of two steps).

    A look-up is one or two `dict.get`s without a lock (atomic under the GIL): the engine looks up thousands
    of parts a second, and an `OrderedDict` behind a lock cost more than the look-up it saved. Writes take
    the lock."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._half = max_bytes // 2
        self._young: dict[Any, tuple[Any, int]] = {}
        self._old: dict[Any, tuple[Any, int]] = {}
        self._young_bytes = 0
        self._old_bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._young_bytes + self._old_bytes

    def get(self, key):
        found = self._young.get(key)
        if found is not None:
            return found[0]
        found = self._old.get(key)
        if found is None:
            return None
        self.put(key, *found)
        return found[0]

    def put(self, key, value, size: int) -> None:
        if size > self._half:
            return
        with self._lock:
            young = self._young
            old = young.get(key)
            if old is not None:
                self._young_bytes -= old[1]
            elif self._young_bytes + size > self._half:
                self._old, self._old_bytes = young, self._young_bytes
                young = self._young = {}
                self._young_bytes = 0
            young[key] = (value, size)
            self._young_bytes += size

    def clear(self) -> None:
        with self._lock:
            self._young, self._old = {}, {}
            self._young_bytes = self._old_bytes = 0

    def __len__(self) -> int:
        return len(self._young) + sum(1 for k in self._old if k not in self._young)


# --- string tables ----------------------------------------------------------------------------------------

def key_hash(raw: bytes) -> int:
    return zlib.crc32(raw)


class StrTable:
    """Strings (UTF-8 blob + offsets) found by a crc32 bucket index, each with a list of int values (CSR)."""

    def __init__(self, blob, offs, bstart, border, voffs, vals):
        self.n = len(offs) - 1
        self.mask = len(bstart) - 2
        self._blob = memview(blob)
        self._offs = memview(offs)
        self._bstart = memview(bstart)
        self._border = memview(border)
        self._voffs = memview(voffs)
        self.vals_array = np.asarray(vals)  # a plain view: slicing a np.memmap is slow
        self._vals = memview(vals)

    def find(self, key: str) -> int:
        raw = key.encode()
        return self.find_hashed(raw, key_hash(raw))

    def find_raw(self, raw: bytes) -> int:
        """`find` of an encoded key."""
        return self.find_hashed(raw, key_hash(raw))

    def find_hashed(self, raw: bytes, h: int) -> int:
        """`find` of an encoded key whose `key_hash` is known (one hash for several tables)."""
        bstart = self._bstart
        b = h & self.mask
        i = bstart[b]
        end = bstart[b + 1]
        if i == end:  # an empty bucket: most look-ups of strings that are not there end here
            return -1
        offs, blob, border = self._offs, self._blob, self._border
        n = len(raw)
        while i < end:
            k = border[i]
            start = offs[k]
            if offs[k + 1] - start == n and blob[start:start + n] == raw:
                return k
            i += 1
        return -1

    def string(self, k: int) -> str:
        return bytes(self._blob[self._offs[k]:self._offs[k + 1]]).decode()

    def values(self, k: int):
        return self._vals[self._voffs[k]:self._voffs[k + 1]]

    def count(self, k: int) -> int:
        return self._voffs[k + 1] - self._voffs[k]

    def value_range(self, k: int) -> tuple[int, int]:
        return self._voffs[k], self._voffs[k + 1]


def memview(arr) -> memoryview:
    """A memoryview of a 1-d numpy array: indexing it gives Python ints (fast in the look-up loops)."""
    arr = np.ascontiguousarray(arr)
    return memoryview(arr) if len(arr) else memoryview(np.zeros(1, arr.dtype))[:0]


def _encode_strings(strings: list[str]) -> tuple[np.ndarray, np.ndarray, list[bytes]]:
    raws = [s.encode() for s in strings]
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
    offs = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offs[1:])
    blob = np.frombuffer(b"".join(raws), dtype=np.uint8) if raws else np.zeros(0, np.uint8)
    return blob, offs, raws


def table_arrays(prefix: str, strings: list[str], key_ids: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Arrays of a string table: strings[k], and for each k the `values` whose `key_ids` equal k (in order)."""
    blob, offs, raws = _encode_strings(strings)
    n = len(strings)
    nb = 1
    while nb < max(1, n):
        nb <<= 1
    hashes = np.fromiter((key_hash(r) for r in raws), dtype=np.uint32, count=n) & np.uint32(nb - 1)
    border = np.argsort(hashes, kind="stable").astype(np.int32)
    bstart = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(hashes, minlength=nb), out=bstart[1:])
    order = np.argsort(key_ids, kind="stable")
    vals = values[order].astype(np.int32)
    voffs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key_ids, minlength=n), out=voffs[1:])
    return {f"{prefix}_blob": blob, f"{prefix}_offs": offs, f"{prefix}_bstart": bstart, f"{prefix}_border": border,
            f"{prefix}_voffs": voffs, f"{prefix}_vals": vals}


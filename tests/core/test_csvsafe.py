"""CSV exports (issue 24 §3): no cell becomes a formula when a spreadsheet splits the line on its own separator."""
from __future__ import annotations

import csv
import io

import pytest

from app.core.csvsafe import FORMULA_STARTS, csv_lines, safe_cell

HOSTILE = ["Orejuela;=HYPERLINK(A1)", "=1+1", "Smith,=cmd|' /C calc'!A0", "a|@SUM(A1:A9)", "a\t=1", "a;\t=1",
           "x; +41 00", "line one\n=two", "a;  -2+3", "\t=x", "@user", "semi;colon;=x;+y;-z;@w"]
TRIGGERS = tuple(FORMULA_STARTS)


def _export(rows) -> str:
    return "".join(csv_lines(rows))


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_no_cell_is_a_formula_in_any_locale(delimiter):
    """Read back as a spreadsheet of that locale would (it honours the quotes): every cell is text."""
    text = _export([["ref", "count"], *([value, 3] for value in HOSTILE)])
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        for cell in row:
            assert not cell.lstrip(" ").startswith(TRIGGERS), (delimiter, cell)


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_no_cell_is_a_formula_even_when_the_quotes_are_ignored(delimiter):
    """An importer that splits on the separator without honouring quotes (a text import with no text
    qualifier): still no piece starts with a trigger."""
    text = _export([[value] for value in HOSTILE])
    for line in text.splitlines():
        for piece in line.split(delimiter):
            assert not piece.strip(' "').startswith(TRIGGERS), (delimiter, piece)


def test_the_semicolon_case_of_the_issue():
    text = _export([["Orejuela;=HYPERLINK(A1)", 7]])
    assert text == "\"Orejuela;'=HYPERLINK(A1)\",7\r\n"
    # a semicolon locale keeps the quoted value in one cell (the comma after it is then part of that line's text)
    [[cell]] = csv.reader(io.StringIO(text), delimiter=";")
    assert cell.startswith("Orejuela;'=HYPERLINK(A1)")


def test_harmless_text_and_numbers_are_left_alone():
    assert safe_cell("Rodriguez Orejuela, Gilberto") == "Rodriguez Orejuela, Gilberto"
    assert safe_cell("2024-01-31") == "2024-01-31" and safe_cell("a-b; c") == "a-b; c"
    assert safe_cell(-5) == -5 and safe_cell(2.5) == 2.5 and safe_cell(None) is None
    assert _export([["x", -5, 2.5]]) == '"x",-5,2.5\r\n'  # numbers stay numbers (unquoted, no prefix)

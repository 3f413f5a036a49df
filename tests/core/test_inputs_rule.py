"""The inputs rule itself (app/core/inputs.py): its quick pre-check misses no character the rule acts on, and
the helpers that print stored text never raise."""
from __future__ import annotations

import unicodedata
from email.message import EmailMessage

from app.core import inputs


def test_the_quick_check_covers_every_character_the_rule_acts_on():
    """The format characters are listed by range for speed: none of this Python's Unicode version is missed."""
    missed = [f"U+{c:04X}" for c in range(0x110000)
              if (inputs._refused(chr(c), False) or inputs._refused(chr(c), True)
                  or unicodedata.category(chr(c)) in ("Cf", "Cc", "Zl", "Zp", "Cs"))
              and not inputs._suspect("a" + chr(c) + "b")]
    assert missed == []


def test_every_refused_character_is_named():
    for ch in ("\x00", "\x85", "\x9b", "\u2028", "\u202e", "\ud800", "\ufffe", "\U0010ffff", "\U000e0041"):
        _, problems = inputs.clean_text(f"a{ch}b")
        assert problems == [inputs.character_name(ch)] and problems[0].startswith(f"U+{ord(ch):04X} "), ch


def test_header_text_is_one_line_whatever_it_holds():
    """`single_line` (e-mail headers) never raises, and what it returns is a valid header value."""
    hostile = "".join(chr(c) for c in range(0, 0x3000)) + "\ud800\U000e0041\U0010ffff"
    line = inputs.single_line("Gilberto Jose\u2028Bcc: x@evil.example " + hostile)
    assert len(line.splitlines()) == 1
    message = EmailMessage()
    message["Subject"] = line
    bytes(message)
    assert inputs.single_line("Ada\u2028\u0085Lovelace") == "Ada Lovelace"
    assert inputs.free_text("a\u2028b\x85c\r\nd\x00e\u202ef") == "a\nb\nc\nd ef"

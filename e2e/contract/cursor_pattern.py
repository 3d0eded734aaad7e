"""The regular expression that server/src/http/openapi.rs publishes for a
page `cursor` (CURSOR_PATTERN there), derived here so that it can be checked
rather than trusted: `python cursor_pattern.py` prints it, and
schemathesis_check.py refuses a document whose pattern differs.

A cursor is base64url without padding (clarify_core::Cursor) of
`v1:<created_at>:<id>`. The pattern admits the cursors this server issues
and nothing it refuses: `created_at` as 1 to 18 digits (always an i64;
issued ones have 16), and an id of bytes 0x20-0x3F and 0x60-0x7F (every id
the server makes is a UUID: digits, a-f and `-`). That byte set is chosen
because each 6-bit group of the encoding then depends on one byte's bits
alone, so each block of three bytes is a short run of character classes.
Surrounding whitespace is what the server trims (Rust's White_Space); an
empty cursor is the first page.
"""

import base64
import itertools

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
DIGIT = list(range(0x30, 0x3A))
COLON = [0x3A]
ID = list(range(0x20, 0x40)) + list(range(0x60, 0x80))
CLASSES = {"D": DIGIT, ":": COLON, "I": ID}
# What Rust's str::trim removes (char::is_whitespace), as a class body.
WHITESPACE = r"\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000"


def char_class(chars):
    """The shortest class spelling of a set of base64url characters."""
    codes = sorted(ord(c) for c in chars)
    runs = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    spell = lambda code: "\\-" if code == ord("-") else chr(code)
    parts = []
    for lo, hi in runs:
        if hi - lo >= 2:
            parts.append(f"{spell(lo)}-{spell(hi)}")
        else:
            parts.extend(spell(c) for c in range(lo, hi + 1))
    text = "".join(parts)
    return text if len(codes) == 1 else f"[{text}]"


def block(kinds):
    """The encodings of one block of 1 to 3 bytes of the given kinds, as a
    regex: a minimal acyclic automaton, spelled out."""
    words = set()
    for raw in itertools.product(*(CLASSES[k] for k in kinds)):
        words.add(base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("="))
    return automaton(words)


def automaton(words):
    """A regex for a finite set of equal-length words, merging common suffixes."""
    if words == {""}:
        return ""
    by_first = {}
    for word in words:
        by_first.setdefault(word[0], set()).add(word[1:])
    # Characters leading to the same remainder share a class.
    by_rest = {}
    for first, rests in by_first.items():
        by_rest.setdefault(frozenset(rests), set()).add(first)
    alternatives = sorted(char_class(firsts) + automaton(set(rests)) for rests, firsts in by_rest.items())
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


def group(regex):
    """`regex` as one unit, for a quantifier."""
    return regex if regex.startswith("(?:") and regex.endswith(")") and _balanced(regex[3:-1]) else f"(?:{regex})"


def _balanced(inner):
    depth = 0
    for c in inner:
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return False
    return depth == 0


def pattern():
    ddd, ids = block("DDD"), block("III")
    tail = f"{group(ids)}*(?:{block('I')}|{block('II')})"
    rest = f"(?:{group(ids)}+|{tail})"  # one id byte or more, from a block edge
    rest0 = f"(?:{group(ids)}*|{tail})"  # none or more
    body = (
        f"djE6(?:"
        f"{group(ddd)}{{0,5}}{block('DD:')}{rest}"
        f"|{group(ddd)}{{0,5}}{block('D:I')}{rest0}"
        f"|{group(ddd)}{{1,6}}(?:{block(':II')}{rest0}|{block(':I')})"
        f")"
    )
    return f"^[{WHITESPACE}]*(?:{body})?[{WHITESPACE}]*$"


if __name__ == "__main__":
    print(pattern())

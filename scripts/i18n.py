"""The gettext catalogues of moska_p2p: extract the marked texts, compile, check.

    python scripts/i18n.py extract   # moska.po: new texts added (empty), gone ones dropped
    python scripts/i18n.py compile   # moska.mo from moska.po
    python scripts/i18n.py check     # exit 1 if a text lacks a translation or the .mo is stale

The texts are the string literals given to ``_()``, ``N_()`` and ``ngettext()`` anywhere in
the package (:mod:`moska_p2p.i18n`), found with the standard library's ``ast``: no Babel,
no GNU gettext tools on the machine. The ``.mo`` is written by :func:`compile_mo`, a small
msgfmt (the GNU format: a header, two tables of offsets, the strings; no hash table, which
readers do not need), byte for byte the same for the same catalogue, so the test can check
that the shipped ``.mo`` is the compiled ``.po``.
"""

from __future__ import annotations

import argparse
import ast
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "moska_p2p"
LANGUAGES = ("fi",)
HEADER = {
    "fi": (
        "Project-Id-Version: moska-p2p\n"
        "Language: fi\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "Plural-Forms: nplurals=2; plural=(n != 1);\n"
    )
}
MARKERS = {"_": 1, "N_": 1, "ngettext": 2}
"""The marking functions and how many leading string arguments are messages."""


@dataclass
class Entry:
    """One message of a catalogue: its English (and plural), its translation(s), where it
    is used, and whether a translator marked it fuzzy."""

    msgid: str
    plural: str | None = None
    msgstr: list[str] = field(default_factory=lambda: [""])
    places: list[str] = field(default_factory=list)
    fuzzy: bool = False

    @property
    def translated(self) -> bool:
        return not self.fuzzy and all(self.msgstr) and len(self.msgstr) == (2 if self.plural else 1)


def po_path(lang: str) -> Path:
    return PACKAGE / "locale" / lang / "LC_MESSAGES" / "moska.po"


def mo_path(lang: str) -> Path:
    return po_path(lang).with_suffix(".mo")


# ---------------------------------------------------------------------- extraction


def extract(package: Path = PACKAGE) -> dict[str, Entry]:
    """Every marked text of the package, in order of first use, with its places."""
    found: dict[str, Entry] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = path.relative_to(package.parent).as_posix()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            count = MARKERS.get(node.func.id)
            if count is None or len(node.args) < count:
                continue
            texts = node.args[:count]
            if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in texts):
                continue  # _(variable): its text was marked where it was made (N_)
            values = [a.value for a in texts if isinstance(a, ast.Constant)]
            entry = found.get(values[0])
            if entry is None:
                entry = found[values[0]] = Entry(
                    values[0], values[1] if count == 2 else None, ["", ""] if count == 2 else [""]
                )
            entry.places.append(f"{where}:{node.lineno}")
    return dict(sorted(found.items(), key=lambda item: _place_key(item[1].places[0])))


def _place_key(place: str) -> tuple[str, int]:
    name, _, line = place.rpartition(":")
    return name, int(line)


# ---------------------------------------------------------------------- the .po


def _unquote(text: str) -> str:
    body = text.strip()
    if not (body.startswith('"') and body.endswith('"')):
        raise ValueError(f"not a quoted string: {text!r}")
    out = []
    chars = iter(body[1:-1])
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
    for char in chars:
        if char == "\\":
            nxt = next(chars)
            out.append(escapes.get(nxt, "\\" + nxt))
        else:
            out.append(char)
    return "".join(out)


def read_po(path: Path) -> tuple[str, dict[str, Entry]]:
    """The header and the entries of a ``.po`` file (obsolete ``#~`` entries ignored)."""
    entries: dict[str, Entry] = {}
    header = ""
    current: Entry | None = None
    key: tuple[str, int] | None = None
    fuzzy = False
    places: list[str] = []

    def finish() -> None:
        nonlocal current, header
        if current is not None:
            if current.msgid == "":
                header = current.msgstr[0]
            else:
                entries[current.msgid] = current
        current = None

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#"):
            if current is not None and key is not None and key[0] == "msgstr":
                finish()
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            elif line.startswith("#:"):
                places += line[2:].split()
            continue
        try:
            if line.startswith("msgid_plural "):
                assert current is not None
                current.plural = _unquote(line[len("msgid_plural ") :])
                current.msgstr = ["", ""]
                key = ("plural", 0)
            elif line.startswith("msgid "):
                finish()
                current = Entry(_unquote(line[len("msgid ") :]), fuzzy=fuzzy, places=places)
                fuzzy, places = False, []
                key = ("msgid", 0)
            elif line.startswith("msgstr["):
                assert current is not None
                index = int(line[len("msgstr[") : line.index("]")])
                while len(current.msgstr) <= index:
                    current.msgstr.append("")
                current.msgstr[index] = _unquote(line[line.index("]") + 1 :])
                key = ("msgstr", index)
            elif line.startswith("msgstr "):
                assert current is not None
                current.msgstr = [_unquote(line[len("msgstr ") :])]
                key = ("msgstr", 0)
            elif line.startswith('"'):
                assert current is not None and key is not None
                more = _unquote(line)
                if key[0] == "msgid":
                    current.msgid += more
                elif key[0] == "plural":
                    current.plural = (current.plural or "") + more
                else:
                    current.msgstr[key[1]] += more
            else:
                raise ValueError(f"unknown line {line!r}")
        except (AssertionError, ValueError, IndexError) as error:
            raise ValueError(f"{path}:{number}: {error or 'out of place'}") from None
    finish()
    return header, entries


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return '"' + escaped.replace("\n", "\\n") + '"'


def _po_string(keyword: str, text: str) -> list[str]:
    """``keyword "text"``; a text of several lines as one string per line, after ``""``."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= 1:
        return [f"{keyword} {_quote(text)}"]
    return [f'{keyword} ""', *(_quote(line) for line in lines)]


def write_po(path: Path, header: str, entries: dict[str, Entry]) -> None:
    out = ["# Finnish texts of moska-p2p (scripts/i18n.py extract keeps it in step with the code).",
           *_po_string("msgid", ""), *_po_string("msgstr", header), ""]  # fmt: skip
    for entry in entries.values():
        if entry.places:
            out.append("#: " + " ".join(entry.places))
        if entry.fuzzy:
            out.append("#, fuzzy")
        out += _po_string("msgid", entry.msgid)
        if entry.plural is not None:
            out += _po_string("msgid_plural", entry.plural)
            for index, text in enumerate(entry.msgstr):
                out += _po_string(f"msgstr[{index}]", text)
        else:
            out += _po_string("msgstr", entry.msgstr[0])
        out.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out), encoding="utf-8")


def merged(lang: str) -> tuple[str, dict[str, Entry]]:
    """The catalogue as :func:`extract` finds the texts, with the translations the ``.po``
    has for them (texts no longer used are dropped)."""
    path = po_path(lang)
    header, old = read_po(path) if path.exists() else (HEADER[lang], {})
    new = extract()
    for msgid, entry in new.items():
        before = old.get(msgid)
        if before is not None and (before.plural is None) == (entry.plural is None):
            entry.msgstr, entry.fuzzy = before.msgstr, before.fuzzy
    return header or HEADER[lang], new


# ---------------------------------------------------------------------- the .mo


def compile_mo(header: str, entries: dict[str, Entry]) -> bytes:
    """The GNU ``.mo`` of a catalogue: only translated, non-fuzzy entries (as msgfmt)."""
    pairs = {"": header}
    for entry in entries.values():
        if not entry.translated:
            continue
        key = entry.msgid if entry.plural is None else entry.msgid + "\0" + entry.plural
        pairs[key] = "\0".join(entry.msgstr)
    keys = sorted(pairs, key=lambda k: k.encode("utf-8"))
    ids = b""
    strs = b""
    offsets = []
    for k in keys:
        kb, vb = k.encode("utf-8"), pairs[k].encode("utf-8")
        offsets.append((len(ids), len(kb), len(strs), len(vb)))
        ids += kb + b"\0"
        strs += vb + b"\0"
    count = len(keys)
    start = 7 * 4 + 16 * count  # the header, then the two tables of (length, offset)
    id_table = b"".join(struct.pack("<II", length, start + at) for at, length, _, _ in offsets)
    base = start + len(ids)
    str_table = b"".join(struct.pack("<II", length, base + at) for _, _, at, length in offsets)
    head = struct.pack("<7I", 0x950412DE, 0, count, 28, 28 + 8 * count, 0, 0)
    return head + id_table + str_table + ids + strs


# ---------------------------------------------------------------------- commands


def problems(lang: str) -> list[str]:
    """What is wrong with the shipped catalogue of ``lang`` (nothing: an empty list)."""
    path = po_path(lang)
    if not path.exists():
        return [f"{path}: missing (run: python scripts/i18n.py extract)"]
    header, entries = read_po(path)
    found: list[str] = []
    wanted = extract()
    for msgid in wanted.keys() - entries.keys():
        found.append(f"not in {path.name} (run extract): {msgid[:60]!r}")
    for msgid in entries.keys() - wanted.keys():
        found.append(f"in {path.name} but used nowhere (run extract): {msgid[:60]!r}")
    for msgid, entry in entries.items():
        if entry.fuzzy:
            found.append(f"fuzzy: {msgid[:60]!r}")
        elif not entry.translated:
            found.append(f"no translation: {msgid[:60]!r}")
    mo = mo_path(lang)
    if not mo.exists() or mo.read_bytes() != compile_mo(header, entries):
        found.append(f"{mo}: not the compiled {path.name} (run: python scripts/i18n.py compile)")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("extract", "compile", "check"))
    args = parser.parse_args(argv)
    status = 0
    for lang in LANGUAGES:
        if args.command == "extract":
            header, entries = merged(lang)
            write_po(po_path(lang), header, entries)
            missing = sum(not e.translated for e in entries.values())
            where = po_path(lang).relative_to(ROOT)
            print(f"{where}: {len(entries)} texts, {missing} to translate")
        elif args.command == "compile":
            header, entries = read_po(po_path(lang))
            mo_path(lang).write_bytes(compile_mo(header, entries))
            print(f"{mo_path(lang).relative_to(ROOT)}: {len(entries)} texts")
        else:
            for problem in problems(lang):
                print(f"{lang}: {problem}", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

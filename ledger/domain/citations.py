"""Where a citation leads: a finding's ``rule`` string to the documents and headings it cites.

Every finding and every derivation step names the article or interpretation it rests on, in
three forms, which may be combined with ``;`` or ``/``:

- ``RL art. 7``, ``MJ art. 5(a)(1), 6(a)(3)``, ``3CB art. 5 and annex`` — a regulation's
  article: ``docs/games/<GAME>.md``, heading ``Art. N``;
- ``FEED §10``, ``FEED Appendix A`` — the feed format: ``docs/FEED.md``, heading ``§10``;
- ``RULES §6.6``, ``RULES §8.1 S6``, ``RULES §8 G1``, ``RULES §4.6 E1`` — the rules as the
  ledger reads them: a game's sections (§1 SP9, §2 FPC, §3 3CB, §4 MJ, §5 RL, §6 STUD), its
  interpretations (§8.1–§8.6, headed by their id: ``S6``) and numeric facts (§9.1–§9.6) are on
  the game's page; the shared conventions (§0), interpretations G1–G4 (§8), amendments (§7) and
  sources (§10) are in ``docs/RULES.md``.

:func:`resolve` is pure: it maps a string to :class:`Ref` values (a document and the start of a
heading). :func:`heading_anchor` finds that heading in a Markdown text and gives its anchor as
GitHub renders it. Markers such as ``[I]`` and remarks in parentheses are ignored.

>>> resolve("STUD art. 9(5); RULES §8.6 P2")  # doctest: +NORMALIZE_WHITESPACE
[Ref(doc='docs/games/STUD.md', key='art. 9'), Ref(doc='docs/games/STUD.md', key='§8.6'),
 Ref(doc='docs/games/STUD.md', key='P2')]
>>> resolve("RULES §8 G3")
[Ref(doc='docs/RULES.md', key='§8'), Ref(doc='docs/RULES.md', key='G3')]
>>> heading_anchor("# T\\n## §10 Verify\\n", "§10")
'10-verify'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

GAME_DOCS = {key: f"docs/games/{key}.md" for key in ("SP9", "FPC", "3CB", "MJ", "RL", "STUD")}
RULES_DOC = "docs/RULES.md"
FEED_DOC = "docs/FEED.md"
SECTION_GAMES = {1: "SP9", 2: "FPC", 3: "3CB", 4: "MJ", 5: "RL", 6: "STUD"}
"""RULES §1–§6, and the sub-sections of §8 and §9, one per game in this order."""
ID_GAMES = {"S": "SP9", "F": "FPC", "B": "3CB", "M": "MJ", "R": "RL", "P": "STUD"}
"""The letter of an interpretation id (§8.1 S1 … §8.6 P15) and its game; ``G`` is general."""

SOURCES = ("RULES", "FEED", *GAME_DOCS)
_SOURCE = re.compile(r"^\s*(RULES|FEED|SP9|FPC|3CB|MJ|RL|STUD)\b")
_REMARK = re.compile(r"\([^()]*\)|\[[SRI]\]")
_ITEM_LETTER = re.compile(r"\s[A-Za-z]\)")
_SECTION = re.compile(r"§(\d+)(?:\.(\d+))?(?:-(\d+)(?:\.(\d+))?)?")
_ID = re.compile(r"\b([GSFBMRPED])(\d{1,2})(?:-[GSFBMRPED]?(\d{1,2}))?\b")
CITED = re.compile(r"\b(?:RULES|FEED|SP9|FPC|3CB|MJ|RL|STUD) (?=§|arts?\.|Appendix)")
"""Where a citation starts inside a longer text (a message, a docstring)."""


class CitationError(ValueError):
    """A citation this module cannot read."""


@dataclass(frozen=True)
class Ref:
    """One place a citation leads to: a document (from the repository root) and the start of
    one of its headings (``""``: the document itself)."""

    doc: str
    key: str


def resolve(rule: str) -> list[Ref]:
    """Every place ``rule`` cites, in order, without repeats; :class:`CitationError` for a part
    that names no source or no place."""
    refs: list[Ref] = []
    source = ""
    for part in re.split(r";|\s/\s", rule.replace("–", "-")):
        text = part.strip()
        if not text:
            continue
        match = _SOURCE.match(text)
        if match:
            source, text = match.group(1), text[match.end() :]
        elif not source:
            raise CitationError(f"{part.strip()!r} names no source (RULES, FEED or a game)")
        found = list(dict.fromkeys(_resolve_part(source, _plain(text))))
        if not found:
            raise CitationError(f"{part.strip()!r} cites no section, article or id")
        refs += [r for r in found if r not in refs]
    return refs


def _plain(text: str) -> str:
    """The text without remarks in parentheses, item letters (``5 j)``) and markers."""
    previous = None
    while previous != text:
        previous, text = text, _REMARK.sub(" ", text)
    return _ITEM_LETTER.sub(" ", text)


def _resolve_part(source: str, text: str) -> list[Ref]:
    if source == "FEED":
        refs = [Ref(FEED_DOC, f"§{m.group(1)}") for m in _SECTION.finditer(text)]
        return refs + ([Ref(FEED_DOC, "Appendix A")] if "Appendix A" in text else [])
    if source == "RULES":
        return _rules(text)
    doc = GAME_DOCS[source]
    if "art" not in text:
        return []
    articles = [Ref(doc, f"art. {n}") for n in re.findall(r"\d+", text)]
    return articles + ([Ref(doc, "Annex")] if "annex" in text else [])


def _rules(text: str) -> list[Ref]:
    """``§a.b`` sections, ranges ``§4.7-4.9``, and ids read in the section before them."""
    refs: list[Ref] = []
    section: tuple[int, int | None] | None = None
    tokens = re.finditer(rf"{_SECTION.pattern}|{_ID.pattern}", text)
    for token in tokens:
        if token.group(0).startswith("§"):
            major, minor = int(token.group(1)), token.group(2)
            section = (major, int(minor) if minor else None)
            last = int(token.group(4)) if token.group(4) else None
            for sub in range(section[1] or 0, (last or section[1] or 0) + 1):
                refs.append(_section_ref(major, sub if section[1] is not None else None))
            continue
        letter, first, last_id = token.group(5), int(token.group(6)), token.group(7)
        for number in range(first, int(last_id or first) + 1):
            refs.append(_id_ref(letter, number, section))
    return refs


def _section_ref(major: int, minor: int | None) -> Ref:
    if major in SECTION_GAMES:
        doc = GAME_DOCS[SECTION_GAMES[major]]
        return Ref(doc, "" if minor is None else f"§{major}.{minor}")
    if major in (8, 9) and minor in SECTION_GAMES:
        return Ref(GAME_DOCS[SECTION_GAMES[minor]], f"§{major}.{minor}")
    return Ref(RULES_DOC, f"§{major}" if minor is None else f"§{major}.{minor}")


def _id_ref(letter: str, number: int, section: tuple[int, int | None] | None) -> Ref:
    if section is not None and section[0] == 4:  # MJ fán elements E1–E12, D1–D12, S1–S3
        return Ref(GAME_DOCS["MJ"], f"§4.{section[1] or 6}")
    if letter == "G":
        return Ref(RULES_DOC, f"G{number}")
    if letter in ID_GAMES:
        return Ref(GAME_DOCS[ID_GAMES[letter]], f"{letter}{number}")
    raise CitationError(f"{letter}{number} is not an interpretation id")


def citations_in(text: str) -> list[str]:
    """The citations inside a longer text: from each source name followed by ``§``, ``art.``
    or ``Appendix``, up to the end or to a closing parenthesis the citation did not open."""
    found = []
    for match in CITED.finditer(text):
        depth, end = 0, len(text)
        for i in range(match.start(), len(text)):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                if depth == 0:
                    end = i
                    break
                depth -= 1
        found.append(text[match.start() : end].rstrip(" ,.:"))
    return found


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def headings(markdown: str) -> list[str]:
    """The headings of a Markdown text, in order, outside code blocks."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            out.append(m.group(2))
    return out


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to ``-``."""
    kept = "".join(c for c in heading.lower() if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def heading_anchor(markdown: str, key: str) -> str | None:
    """The anchor of the first heading that starts with ``key`` (``""``: the document), or
    ``None`` if there is none."""
    if key == "":
        return ""
    seen: dict[str, int] = {}
    pattern = re.compile(re.escape(key) + r"(?![\w.])", re.IGNORECASE)
    for text in headings(markdown):
        anchor = slug(text)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        if pattern.match(text):
            return anchor if count == 0 else f"{anchor}-{count}"
    return None

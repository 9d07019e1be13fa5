"""Every citation the ledger can print leads to a heading of the repository's own documents.

The citations are collected three ways: every string in the code (``ledger``, ``projections``,
``cli``) holding ``RULES §``, ``FEED §`` or ``<GAME> art.``; every ``rule`` in the golden replay
transcripts; and every ``rule`` of the findings and derivation steps verify gives on a faulty
simulated day of all six games. Each is resolved (:mod:`ledger.domain.citations`) and each place it
leads to must be a heading of that document. The documents must not point outside the
repository."""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path

import pytest

from ledger.domain.citations import CITED, Ref, citations_in, heading_anchor, headings, resolve, slug
from ledger.games import GAMES
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.engine import verify_store
from ledger.verify.judge import Judged

ROOT = Path(__file__).resolve().parents[2]
CODE = ("ledger", "projections", "cli")
MAY_CITE = re.compile(r"§|arts?\.|Appendix")
"""What every citation holds (the look-ahead of ``CITED``): a file without it is not parsed."""


def code_citations() -> set[str]:
    """The citations inside every string constant of the code that can reach a user: rule
    strings and messages (docstrings, written for developers, are left out)."""
    found: set[str] = set()
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if not MAY_CITE.search(source):  # no constant of this file can match CITED
                continue
            tree = ast.parse(source)
            docstrings = {
                id(node.value)
                for node in ast.walk(tree)
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docstrings
                ):
                    text = " ".join(node.value.split())
                    if CITED.search(text):
                        found.update(citations_in(text))
    return found


def golden_citations() -> set[str]:
    """Every ``rule`` in the golden replay transcripts."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "rule" and isinstance(item, str) and item:
                    found.add(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted((ROOT / "tests" / "golden").glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def verified_citations(tmp_path: Path) -> set[str]:
    """Every ``rule`` of the findings, settlements and steps of a faulty simulated day."""
    sim = simulate(list(GAMES.values()), rounds=12, tables=2, seed=18, error_rate=0.5, rounds_for={"MJ": 4})
    app = open_ledger(f"sqlite:///{tmp_path / 'cite.db'}")
    found: set[str] = set()

    def keep(judged: Judged) -> None:
        found.update(s.rule for s in judged.derivation.steps if s.rule)
        found.update(s.rule for s in judged.derivation.expected.values() if s.rule)
        found.update(c.rule for c in judged.derivation.commissions if c.rule)

    try:
        lines = [json.dumps(line) for line in sim.lines]
        Ingestor(app).ingest(numbered_lines(lines))
        report = verify_store(app, on_judged=keep)
    finally:
        app.close()
    assert len(report.findings) > 20  # the day is faulty enough to be worth reading
    return found | {f.rule for f in report.findings if f.rule}


@cache
def document(doc: str) -> str:
    return (ROOT / doc).read_text(encoding="utf-8")


def unresolved(citations: set[str]) -> list[str]:
    """``citation -> place`` for every place that is not a heading of its document."""
    missing = []
    for rule in sorted(citations):
        try:
            refs: list[Ref] = resolve(rule)
        except ValueError as exc:
            missing.append(f"{rule!r}: {exc}")
            continue
        for ref in refs:
            if not (ROOT / ref.doc).is_file() or heading_anchor(document(ref.doc), ref.key) is None:
                missing.append(f"{rule!r} -> {ref.doc} {ref.key!r}")
    return missing


def test_every_citation_in_the_code_resolves_to_a_heading() -> None:
    citations = code_citations()
    assert len(citations) > 100  # the walk found the code's citations
    assert unresolved(citations) == []


def test_every_rule_of_the_golden_transcripts_resolves_to_a_heading() -> None:
    citations = golden_citations()
    assert len(citations) > 30
    assert unresolved(citations) == []


def test_every_rule_verify_gives_on_a_faulty_day_resolves_to_a_heading(tmp_path: Path) -> None:
    assert unresolved(verified_citations(tmp_path)) == []


def test_a_citation_names_its_source_and_its_place() -> None:
    assert resolve("SP9 art. 5(3); RULES §8.1 S6 [I]") == [
        Ref("docs/games/SP9.md", "art. 5"),
        Ref("docs/games/SP9.md", "§8.1"),
        Ref("docs/games/SP9.md", "S6"),
    ]
    assert resolve("MJ art. 6(b); RULES §4.6 S3") == [
        Ref("docs/games/MJ.md", "art. 6"),
        Ref("docs/games/MJ.md", "§4.6"),
    ]  # MJ-S fán, not SP9
    assert resolve("FEED §10 (betting closes)") == [Ref("docs/FEED.md", "§10")]
    with pytest.raises(ValueError):
        resolve("art. 5")
    with pytest.raises(ValueError):
        resolve("RULES (nothing)")


def test_a_heading_is_found_by_its_start_and_not_by_a_longer_number() -> None:
    text = "# P\n## Art. 10 — jackpot\n## Art. 1 — equipment\n### P12 x\n### P1 — y\n"
    assert heading_anchor(text, "art. 1") == "art-1--equipment"
    assert heading_anchor(text, "P1") == "p1--y"
    assert heading_anchor(text, "P2") is None
    assert heading_anchor("```\n# §9 not a heading\n```\n", "§9") is None


OWNED_ELSEWHERE = {"FINANCE.md"}
"""Pages rewritten by other work in progress; checked here once they land."""
DOCS = [p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name not in OWNED_ELSEWHERE]
DOCS.append(ROOT / "README.md")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_document_points_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\.\./shared|/work/|shared/(examples|FEED|RULES)", text)


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text, as GitHub numbers repeated ones."""
    seen: dict[str, int] = {}
    out = set()
    for text in headings(markdown):
        base = slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_of_the_documents_exists(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if target.endswith("CLI.md"):
            continue  # written by the command-reference work, linked ahead of it
        file = (path.parent / target) if target else path
        assert file.exists(), f"{path.name}: {target}"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file.read_text(encoding="utf-8")), f"{path.name}: {target}#{anchor}"

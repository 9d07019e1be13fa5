"""Where a page's figures come from: the store's head, a checkpoint if one was given, when the
page was made and by which version of the ledger — printed in every page's footer, so that a
page kept for years says which state of the store it describes.

The head digest commits to every event stored before the page was made: ``ledger verify
--expect-head HEAD`` later proves the store still holds that state. A checkpoint is a signed
head (``ledger seal``); the footer says whether the store holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

from ledger.domain.errors import SealError
from ledger.proof.seal import Checkpoint, checkpoint_findings
from ledger.report.markup import Markup, el, join
from ledger.storage.store import LedgerApp


@dataclass(frozen=True)
class Provenance:
    """What a page was made from."""

    head: str | None
    """The digest of the newest chain link when the page was made (``None``: an empty store)."""
    generated_at: datetime
    version: str
    checkpoint: str | None = None
    """The checkpoint given, described, and whether the store holds it."""


def ledger_version() -> str:
    """The installed ledger's version."""
    try:
        return version("ledger")
    except PackageNotFoundError:
        return "unknown"


def provenance(
    app: LedgerApp, checkpoint: Checkpoint | None = None, now: datetime | None = None
) -> Provenance:
    """The provenance of a page made now from ``app``."""
    described = None
    if checkpoint is not None:
        pos = checkpoint.position
        held = not checkpoint_findings(app, checkpoint)
        try:
            checkpoint.check_signature()
            signed = "signature valid for the key it names"
        except SealError:
            signed = "signature INVALID"
        described = (
            f"sealed {checkpoint.sealed_at} by key {checkpoint.key_id}: "
            f"{pos.events:,} events, head {pos.head[:16]}…; {signed}; "
            + ("the store holds it" if held else "the store does NOT hold it")
        )
    return Provenance(app.head(), now or datetime.now(UTC), ledger_version(), described)


def footer(prov: Provenance | None, how: str) -> Markup:
    """A page's footer: the provenance lines, then ``how`` (the command that made it)."""
    lines: list[Markup] = []
    if prov is not None:
        lines.append(
            el("div", el("b", "store head "), el("code", prov.head or "(empty store)", class_="digest"))
        )
        lines.append(
            el(
                "div",
                el("b", "checkpoint "),
                prov.checkpoint or "none given (ledger report … --checkpoint FILE)",
            )
        )
        lines.append(
            el(
                "div",
                el("b", "generated "),
                prov.generated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
                " · ",
                el("b", "ledger "),
                prov.version,
            )
        )
    lines.append(el("div", how))
    return el("footer", join(lines), class_="provenance")

"""Proof bundles: one round's stored events, checkable against a signed checkpoint offline.

A bundle (``ledger export-round TABLE/ROUND --bundle FILE``) holds

- the round's stored events, each with its exact content bytes (as text) and chain digest, so a
  verifier recomputes the round's digest chain from its genesis (``ledger.chain.genesis`` of the
  round id, itself derived from table and round) to its last digest;
- the **chain links** from the one that covers the round's last event up to a checkpointed head,
  with the digest of the link before the first of them, so the verifier recomputes each link's
  digest and walks to the head a checkpoint signed.

:func:`check_bundle` needs no database: the first link must list the round's last version with
the recomputed digest, no later link may list the round again (so the bundle holds the whole
round as of the checkpoint), and the walk must reach the checkpoint's head at the checkpoint's
link version. Limits (``docs/SECURITY.md``): the proof is as large as the number of saves between
the round and the checkpoint (seal often; export against the first checkpoint after the round);
it proves the round was in the store unchanged when sealed, not that the table sent it, and not
what other rounds (a shared jackpot pool, a bank) contained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from ledger.chain import CHAIN_ID, Linked, genesis, next_digest
from ledger.errors import BundleError as BundleError  # raised here; defined in the error tree
from ledger.errors import SealError
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent
from ledger.merkle.proofs import check_round_proof, round_proof
from ledger.round import round_id
from ledger.seal import Checkpoint, chain_links
from ledger.store import TOPICS, LedgerApp, Recorded

BUNDLE_FORMAT = "ledger-bundle-v1"


def export_round(
    app: LedgerApp, table: str, round: str, checkpoint: Checkpoint | None = None, *, merkle: bool = False
) -> dict[str, Any]:
    """The bundle of one round, with links up to ``checkpoint`` (default: the newest link), or
    with ``merkle`` its last row's Merkle proof to that seal's note instead of the links
    (``ledger.merkle.proofs``; default: the newest note)."""
    oid = round_id(table, round)
    events = app.stored(oid)
    if not events:
        raise BundleError(f"no round {table}/{round} in the store")
    if merkle:
        return {
            "format": BUNDLE_FORMAT,
            "table": table,
            "round": round,
            "aggregate": str(oid),
            "events": [_item(e) for e in events],
            "merkle": round_proof(app, oid, checkpoint),
        }
    last_version, last_digest = events[-1].originator_version, events[-1].digest
    newest = app.stored(CHAIN_ID, desc=True, limit=1)
    if not newest:
        raise BundleError("the store has no chain link")
    end = newest[0].originator_version
    if checkpoint is not None:
        end = checkpoint.position.links
        at = app.stored(CHAIN_ID, gt=end - 1, lte=end)
        if not at or at[0].digest != checkpoint.position.head:
            raise BundleError(
                f"the store does not hold the checkpoint's head at link {end}: "
                "verify it with `ledger verify --checkpoint`"
            )
    first = _covering_link(app, oid, last_version, last_digest, end)
    if checkpoint is not None and first > end:
        raise BundleError(
            f"the round's last save (link {first}) is newer than the checkpoint "
            f"(link {end}): seal again, then export"
        )
    previous = (
        genesis(CHAIN_ID) if first == 1 else app.stored(CHAIN_ID, gt=first - 2, lte=first - 1)[0].digest
    )
    links = list(chain_links(app, first=first, last=end))
    return {
        "format": BUNDLE_FORMAT,
        "table": table,
        "round": round,
        "aggregate": str(oid),
        "events": [_item(e) for e in events],
        "links": {"previous": previous, "items": [_item(link) for link in links]},
    }


def _item(rec: Recorded) -> dict[str, Any]:
    return {
        "version": rec.originator_version,
        "topic": rec.topic,
        "digest": rec.digest,
        "content": rec.content.decode("utf-8"),
    }


def _covering_link(app: LedgerApp, oid: UUID, version: int, digest: str, end: int) -> int:
    """The version of the link that lists the round's last event, searching back from ``end``."""
    upper = end
    while upper >= 1:
        page = app.stored(CHAIN_ID, lte=upper, desc=True, limit=500)
        if not page:
            break
        for rec in page:
            assert isinstance(rec.fact, Linked)
            for entry in rec.fact.entries:
                if entry.aggregate == oid:
                    if entry.last != version or entry.digest != digest:
                        raise BundleError(
                            f"chain link {rec.originator_version} does not match "
                            "the round's stored events: run `ledger verify`"
                        )
                    return rec.originator_version
        upper = page[-1].originator_version - 1
    raise BundleError(
        "no chain link covers the round's last event up to the chosen head "
        "(the round was saved after it, or the store is damaged)"
    )


@dataclass
class BundleCheck:
    """The outcome of checking a bundle against a checkpoint."""

    table: str = ""
    round: str = ""
    events: int = 0
    closed: bool = False
    links_walked: int = 0
    problems: list[str] = field(default_factory=list)
    facts: list[FeedEvent] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the bundle is proven against the checkpoint."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """A JSON summary."""
        return {
            "table": self.table,
            "round": self.round,
            "events": self.events,
            "closed": self.closed,
            "links_walked": self.links_walked,
            "proof": "ok" if self.ok else "broken",
            "problems": self.problems,
        }


def parse_bundle(text: str | bytes) -> dict[str, Any]:
    """Read a bundle file's text; :class:`BundleError` if it is not one."""
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise BundleError(f"not a bundle: {exc}") from None
    except RecursionError:
        raise BundleError("not a bundle: its JSON is nested too deeply") from None
    if not isinstance(obj, dict) or obj.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"not a {BUNDLE_FORMAT} file")
    return obj


def check_bundle(bundle: dict[str, Any], checkpoint: Checkpoint) -> BundleCheck:
    """Prove a bundle's round against a checkpoint whose signature was already checked."""
    result = BundleCheck()
    try:
        _check(bundle, checkpoint, result)
    except (KeyError, TypeError, ValueError, AttributeError, UnicodeError) as exc:
        result.problems.append(f"the bundle is malformed: {type(exc).__name__}: {exc}")
    return result


def _check(bundle: dict[str, Any], checkpoint: Checkpoint, result: BundleCheck) -> None:
    result.table, result.round = str(bundle["table"]), str(bundle["round"])
    oid = round_id(result.table, result.round)
    if str(bundle.get("aggregate")) != str(oid):
        result.problems.append("the bundle's aggregate id is not the id of its table and round")
    digest = genesis(oid)
    events: list[dict[str, Any]] = bundle["events"]
    for expected_version, item in enumerate(events, start=1):
        content = str(item["content"]).encode("utf-8")
        if item["version"] != expected_version:
            result.problems.append(
                f"event versions are not 1, 2, 3, …: found {item['version']} at position {expected_version}"
            )
            return
        digest = next_digest(digest, content)
        if digest != item["digest"]:
            result.problems.append(
                f"event {expected_version}: its content does not match its "
                "digest (changed after export, or before)"
            )
            return
        fact = _fact(str(item["topic"]), content)
        if (
            not isinstance(fact, FeedEvent)
            or fact.table != result.table
            or fact.round != result.round
            or fact.seq != expected_version
        ):
            result.problems.append(
                f"event {expected_version} is not seq {expected_version} of {result.table}/{result.round}"
            )
            return
        result.facts.append(fact)
    if not events:
        result.problems.append("the bundle holds no event")
        return
    result.events = len(events)
    result.closed = result.facts[-1].type in TERMINAL_TYPES
    if "merkle" in bundle:
        result.problems += check_round_proof(bundle["merkle"], oid, events[-1], checkpoint)
        return
    _walk_links(bundle["links"], oid, len(events), digest, checkpoint, result)


def _walk_links(
    links: dict[str, Any],
    oid: UUID,
    last_version: int,
    last_digest: str,
    checkpoint: Checkpoint,
    result: BundleCheck,
) -> None:
    target = checkpoint.position
    items: list[dict[str, Any]] = links["items"]
    if not items:
        result.problems.append("the bundle holds no chain link")
        return
    digest = str(links["previous"])
    version = int(items[0]["version"])
    if version > target.links:
        result.problems.append(
            f"the round was last saved in link {version}, after the "
            f"checkpoint (link {target.links}): use a later checkpoint"
        )
        return
    for position, item in enumerate(items):
        if item["version"] != version + position:
            result.problems.append("the bundle's chain links are not consecutive")
            return
        content = str(item["content"]).encode("utf-8")
        digest = next_digest(digest, content)
        if digest != item["digest"]:
            result.problems.append(f"chain link {item['version']}: its content does not match its digest")
            return
        link = Linked.model_validate_json(content)
        listed = [e for e in link.entries if e.aggregate == oid]
        if position == 0:
            if not listed or listed[-1].last != last_version or listed[-1].digest != last_digest:
                result.problems.append(
                    f"chain link {item['version']} does not list the round's "
                    f"last event (version {last_version}) with its digest"
                )
                return
        elif listed:
            result.problems.append(
                f"chain link {item['version']} adds events to the round that the bundle does not hold"
            )
            return
        result.links_walked = position + 1
        if item["version"] == target.links:
            if digest != target.head:
                result.problems.append(
                    f"chain link {target.links} has digest {digest}, the checkpoint signed {target.head}"
                )
            return
    result.problems.append(
        f"the bundle's links end at {version + len(items) - 1}, before the "
        f"checkpoint's link {target.links}: export against this checkpoint"
    )


def _fact(topic: str, content: bytes) -> Any:
    cls = TOPICS.get(topic)
    if cls is None:
        return None
    try:
        return cls.model_validate_json(content)
    except ValidationError:
        return None


__all__ = [
    "BUNDLE_FORMAT",
    "BundleCheck",
    "BundleError",
    "SealError",
    "check_bundle",
    "export_round",
    "parse_bundle",
]

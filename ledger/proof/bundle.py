"""Proof bundles: one round's stored events, checkable against a signed checkpoint offline.

A bundle (``ledger export-round TABLE/ROUND --bundle FILE``) holds

- the round's stored events, each with its exact content bytes (as text) and chain digest, so a
  verifier recomputes the round's digest chain from its genesis (``ledger.codec.chain.genesis`` of the
  round id, itself derived from table and round) to its last digest;
- the **chain links** from the one that covers the round's last event up to a checkpointed head,
  with the digest of the link before the first of them, so the verifier recomputes each link's
  digest and walks to the head a checkpoint signed.

:func:`check_bundle` needs no database: the first link must list the round's last version with
the recomputed digest, no later link may list the round again (so the bundle holds the whole
round as of the checkpoint), and the walk must reach the checkpoint's head at the checkpoint's
link version. Limits (``docs/SECURITY.md``): the proof is as large as the number of saves between
the round and the checkpoint (seal often; export against the first checkpoint after the round);
it proves the round was in the store unchanged when sealed, not that the table sent it.

With ``--merkle`` the bundle is ``ledger-bundle-v2``: the round's events packed once (topic and
content of each, zlib-compressed, base64; versions and digests are recomputed from the round's
genesis), the inclusion proof of its last row in a signed checkpoint note
(``ledger.merkle.proofs``) and, for a game whose rules span rounds, the part of the signed state
the round depends on (``ledger.merkle.dependent``). :func:`check_bundle` then also judges the
round with its game's rules, from that proven state, and gives the findings ``ledger verify``
gives it.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from ledger.codec.chain import CHAIN_ID, Linked, genesis, next_digest
from ledger.domain.errors import BundleError as BundleError  # raised here; defined in the error tree
from ledger.domain.errors import SealError
from ledger.domain.findings import Finding
from ledger.domain.round import Round, round_id
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent
from ledger.games import GAMES
from ledger.merkle.dependent import check_state, export_state
from ledger.merkle.heads import note_at
from ledger.merkle.proofs import check_round_proof, event_leaf, round_proof
from ledger.merkle.rfc6962 import verify_inclusion
from ledger.proof.note import CheckpointBody, NoteError, parse_note
from ledger.proof.seal import Checkpoint, chain_links, parse_public_key
from ledger.storage.store import TOPICS, LedgerApp, Recorded
from ledger.verify.judge import RoundJudge

BUNDLE_FORMAT = "ledger-bundle-v1"
BUNDLE_FORMAT_V2 = "ledger-bundle-v2"
MAX_PACKED_BYTES = 1 << 24
"""Packed events that unpack to more than this are refused (a round is a few kilobytes)."""


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
        return _export_merkle(app, table, round, events, checkpoint)
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


def _export_merkle(
    app: LedgerApp, table: str, round: str, events: list[Recorded], checkpoint: Checkpoint | None
) -> dict[str, Any]:
    oid = round_id(table, round)
    proof = round_proof(app, oid, checkpoint)
    obj: dict[str, Any] = {
        "format": BUNDLE_FORMAT_V2,
        "table": table,
        "round": round,
        "events": pack_events([(e.topic, e.content) for e in events]),
        "merkle": proof,
    }
    facts = [_fact(e.topic, e.content) for e in events]
    if events and all(isinstance(f, FeedEvent) for f in facts) and facts[-1].type in TERMINAL_TYPES:
        note = note_at(app, proof["size"])
        assert note is not None
        rnd = Round.replay(facts)
        state = export_state(app, rnd, proof["index"], note, _fact, pack_events)
        if state is not None:
            obj["state"] = state
    return obj


def pack_events(stored: list[tuple[str, bytes]]) -> str:
    """A round's events as one text: the JSON list of ``[topic, content]``, zlib, base64."""
    data = json.dumps([[t, c.decode("utf-8")] for t, c in stored], separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(zlib.compress(data.encode("utf-8"), 9)).decode()


def unpack_events(text: Any) -> list[tuple[str, bytes]]:
    """Inverse of :func:`pack_events`; ``ValueError`` if it is not packed events."""
    if not isinstance(text, str):
        raise ValueError("packed events are a base64 text")
    try:
        raw = base64.b64decode(text, validate=True)
        unzip = zlib.decompressobj()
        data = unzip.decompress(raw, MAX_PACKED_BYTES)
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"packed events that do not unpack: {exc}") from None
    if unzip.unconsumed_tail or not unzip.eof:
        raise ValueError(f"packed events that unpack to more than {MAX_PACKED_BYTES} bytes, or cut short")
    items = json.loads(data)
    if not isinstance(items, list) or not all(
        isinstance(i, list) and len(i) == 2 and all(isinstance(x, str) for x in i) for i in items
    ):
        raise ValueError("packed events are a list of [topic, content]")
    return [(t, c.encode("utf-8")) for t, c in items]


def bundle_items(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    """A bundle's events as items (version, topic, digest, content), whatever its format: in
    ``ledger-bundle-v2`` the digests are recomputed from the round's genesis."""
    if bundle.get("format") != BUNDLE_FORMAT_V2:
        items: list[dict[str, Any]] = bundle["events"]
        return items
    return _chained(round_id(str(bundle["table"]), str(bundle["round"])), unpack_events(bundle["events"]))


def _chained(oid: UUID, stored: list[tuple[str, bytes]]) -> list[dict[str, Any]]:
    digest = genesis(oid)
    items = []
    for version, (topic, content) in enumerate(stored, start=1):
        digest = next_digest(digest, content)
        items.append({"version": version, "topic": topic, "digest": digest, "content": content.decode()})
    return items


def with_items(bundle: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """The bundle with its events replaced by ``items`` (packed again in ``ledger-bundle-v2``)."""
    if bundle.get("format") != BUNDLE_FORMAT_V2:
        return {**bundle, "events": items}
    return {**bundle, "events": pack_events([(i["topic"], str(i["content"]).encode()) for i in items])}


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
    judged: bool | None = None
    """``ledger-bundle-v2``: whether the round was judged (``None``: not a v2 bundle)."""
    findings: list[Finding] = field(default_factory=list)
    """The round's findings, as ``ledger verify`` gives them, when judged."""
    state_keys: list[str] = field(default_factory=list)
    """The keys of the signed state the round was judged from."""
    replayed: int = 0
    """Rounds judged from the earlier note's state up to the bundle's note, the round's own among them."""

    @property
    def ok(self) -> bool:
        """Whether the bundle is proven against the checkpoint."""
        return not self.problems

    @property
    def errors(self) -> list[Finding]:
        """The findings that are errors."""
        return [f for f in self.findings if f.severity == "error"]

    def to_json(self) -> dict[str, Any]:
        """A JSON summary (with the judgement of a ``ledger-bundle-v2`` bundle)."""
        out: dict[str, Any] = {
            "table": self.table,
            "round": self.round,
            "events": self.events,
            "closed": self.closed,
            "links_walked": self.links_walked,
            "proof": "ok" if self.ok else "broken",
            "problems": self.problems,
        }
        if self.judged is not None:
            out.update(
                judged=self.judged,
                findings=[f.to_json() for f in self.findings],
                state={"keys": self.state_keys, "rounds_replayed": self.replayed},
            )
        return out


def parse_bundle(text: str | bytes) -> dict[str, Any]:
    """Read a bundle file's text; :class:`BundleError` if it is not one."""
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise BundleError(f"not a bundle: {exc}") from None
    except RecursionError:
        raise BundleError("not a bundle: its JSON is nested too deeply") from None
    if not isinstance(obj, dict) or obj.get("format") not in (BUNDLE_FORMAT, BUNDLE_FORMAT_V2):
        raise BundleError(f"not a {BUNDLE_FORMAT} or {BUNDLE_FORMAT_V2} file")
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
    v2 = bundle.get("format") == BUNDLE_FORMAT_V2
    if not v2 and str(bundle.get("aggregate")) != str(oid):
        result.problems.append("the bundle's aggregate id is not the id of its table and round")
    events = bundle_items(bundle)
    result.facts, problem = _facts(oid, result.table, result.round, events)
    if problem:
        result.problems.append(problem)
        return
    digest = events[-1]["digest"]
    result.events = len(events)
    result.closed = result.facts[-1].type in TERMINAL_TYPES
    if "merkle" in bundle:
        result.problems += check_round_proof(bundle["merkle"], oid, events[-1], checkpoint)
        if v2 and not result.problems:
            _judge(bundle, checkpoint, result)
        return
    _walk_links(bundle["links"], oid, len(events), digest, checkpoint, result)


def _facts(
    oid: UUID, table: str, round: str, events: list[dict[str, Any]]
) -> tuple[list[FeedEvent], str | None]:
    """A round's events read back and checked against its digest chain: its facts, or what is
    wrong with them."""
    facts: list[FeedEvent] = []
    digest = genesis(oid)
    for expected_version, item in enumerate(events, start=1):
        content = str(item["content"]).encode("utf-8")
        if item["version"] != expected_version:
            return facts, (
                f"event versions are not 1, 2, 3, …: found {item['version']} at position {expected_version}"
            )
        digest = next_digest(digest, content)
        if digest != item["digest"]:
            return facts, (
                f"event {expected_version}: its content does not match its "
                "digest (changed after export, or before)"
            )
        fact = _fact(str(item["topic"]), content)
        if (
            not isinstance(fact, FeedEvent)
            or fact.table != table
            or fact.round != round
            or fact.seq != expected_version
        ):
            return facts, f"event {expected_version} is not seq {expected_version} of {table}/{round}"
        facts.append(fact)
    if not events:
        return facts, "the bundle holds no event"
    return facts, None


def _judge(bundle: dict[str, Any], checkpoint: Checkpoint, result: BundleCheck) -> None:
    """Judge a proven round with its game's rules: alone, or from the proven state part."""
    rnd = Round.replay(result.facts)
    game = GAMES[rnd.game]
    result.judged = False
    if not result.closed:
        return  # a round in play is judged when it closes
    if "state" not in bundle:
        if game.follows_rounds:
            if game.dependency is not None:
                result.problems.append(
                    f"the bundle carries no state part, and a {rnd.game} round is judged from the "
                    "state earlier rounds left: export it again"
                )
            return
        result.findings, result.judged = RoundJudge().judge_round(rnd).findings, True
        return
    merkle = bundle["merkle"]
    try:
        body = CheckpointBody.parse(parse_note(str(merkle["note"])).text)
    except NoteError as exc:  # opened already by check_round_proof: not reached
        result.problems.append(f"the bundle's note: {exc}")
        return
    key = parse_public_key(checkpoint.public_key.encode())

    def read_round(
        item: dict[str, Any], stored: list[tuple[str, bytes]], index: int, proof: list[bytes]
    ) -> Round:
        table, name = str(item["table"]), str(item["round"])
        oid = round_id(table, name)
        events = _chained(oid, stored)
        facts, problem = _facts(oid, table, name, events)
        if problem:
            raise ValueError(problem)
        if facts[-1].type not in TERMINAL_TYPES:
            raise ValueError("not closed: only closed rounds move the state")
        last = events[-1]
        leaf = event_leaf(oid, last, item.get("stored"))
        if not verify_inclusion(leaf, index, body.size, proof, body.root):
            raise ValueError(
                f"its last event is not leaf {index} of the tree the note signs: "
                "changed, or the proof is wrong"
            )
        return Round.replay(facts)

    checked = check_state(bundle["state"], rnd, int(merkle["index"]), body, key, unpack_events, read_round)
    result.problems += checked.problems
    result.state_keys, result.replayed = checked.keys, checked.replayed
    if not checked.problems:
        result.findings, result.judged = checked.findings, True


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
    "BUNDLE_FORMAT_V2",
    "BundleCheck",
    "BundleError",
    "SealError",
    "bundle_items",
    "check_bundle",
    "export_round",
    "pack_events",
    "parse_bundle",
    "unpack_events",
    "with_items",
]

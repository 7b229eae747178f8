"""What `wt verify` checks of a merged bundle beyond any bundle's rules: the shards it holds are the ones
merge.json names, each intact under its signed statement, and checks.json is what they merge into."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from windtunnel._bundle import layout
from windtunnel._bundle.canonical import sha256_file, sha256_hex
from windtunnel._bundle.content import Contents, fail
from windtunnel._bundle.dsse import envelope_from_json
from windtunnel._bundle.errors import SigningKeyError
from windtunnel._bundle.keys import keyid_of, load_public_key, signature_valid
from windtunnel._bundle.merge_checks import merged_checks, shard_prefix
from windtunnel._bundle.models import ChecksFile
from windtunnel._bundle.shard_models import MergedShard, MergeInfo, ShardInfo
from windtunnel._bundle.statement import Statement, parse_statement
from windtunnel.errors import VerificationError

CHECK = "agreement.shards"


def statement_subjects(merge: MergeInfo) -> dict[str, str]:
    """The merged statement's subjects naming each shard's signed statement by its digest."""
    return {f"{layout.STATEMENT_PREFIX}{shard.prefix}": shard.statement_sha256 for shard in merge.shards}


def sharding_predicate(contents: Contents) -> dict[str, Any]:
    """What the signed predicate says of sharding: a shard's place in its plan, a merge's plan and count."""
    predicate: dict[str, Any] = {}
    if contents.shard is not None:
        predicate["shard"] = contents.shard.model_dump(mode="json")
    if contents.merge is not None:
        predicate["merge"] = {"plan_digest": contents.merge.plan_digest, "count": contents.merge.count}
    return predicate


def check_merged(root: Path, statement: Statement, contents: Contents, files: list[str]) -> None:
    """Each shard under its prefix is intact (its own statement, signed by the key merge.json names and
    named by digest in the merged statement, covers its files exactly), of the plan and index merge.json
    says, nothing else lies in shards/, and checks.json is the merge of the shards' checks."""
    signed = {key: statement.predicate.get(key) for key in ("shard", "merge") if key in statement.predicate}
    if signed != sharding_predicate(contents):
        raise fail(
            "agreement.predicate",
            f"the signed predicate's shard or merge differs from {layout.SHARD} or {layout.MERGE}",
        )
    merge = contents.merge
    if merge is None:
        if statement.statement_subjects:
            raise fail(CHECK, f"the statement names shard statements but there is no {layout.MERGE}")
        return
    if statement.statement_subjects != statement_subjects(merge):
        raise fail(CHECK, f"the signed shard statements differ from the shards {layout.MERGE} names")
    prefixes = tuple(f"{shard.prefix}/" for shard in merge.shards)
    if stray := [name for name in files if layout.in_shards(name) and not name.startswith(prefixes)]:
        raise fail(
            CHECK, f"{stray[0]} lies in {layout.SHARDS_DIR}/ but in none of the shards {layout.MERGE} names"
        )
    parts = [(shard.prefix, _shard_checks(root, files, merge, shard)) for shard in merge.shards]
    if merged_checks(parts) != contents.checks:
        raise fail(CHECK, f"{layout.CHECKS} is not what the shards' checks merge into")


def _shard_checks(root: Path, files: list[str], merge: MergeInfo, shard: MergedShard) -> ChecksFile:
    if shard.prefix != shard_prefix(shard.index):
        raise fail(CHECK, f"shard {shard.index} lies at {shard.prefix}, expected {shard_prefix(shard.index)}")
    base = root / shard.prefix
    try:
        envelope = envelope_from_json((base / layout.ATTESTATION).read_bytes(), source=shard.prefix)
        key = load_public_key(
            (base / layout.PUBLIC_KEY).read_bytes(), source=f"{shard.prefix}/{layout.PUBLIC_KEY}"
        )
        info = ShardInfo.model_validate_json((base / layout.SHARD).read_bytes())
        checks = ChecksFile.model_validate_json((base / layout.CHECKS).read_bytes())
    except (OSError, VerificationError, SigningKeyError, ValidationError) as exc:
        raise fail(CHECK, f"shard {shard.prefix} cannot be read: {exc}") from exc
    if sha256_hex(envelope.payload) != shard.statement_sha256:
        raise fail(CHECK, f"shard {shard.prefix}'s statement is not the one {layout.MERGE} names")
    if keyid_of(key) != shard.keyid or not signature_valid(key, envelope.signatures[0].sig, envelope.pae()):
        raise fail(CHECK, f"shard {shard.prefix}'s statement is not signed by the key {layout.MERGE} names")
    own = parse_statement(envelope.payload).file_subjects
    held = layout.subject_files(
        n.removeprefix(f"{shard.prefix}/") for n in files if n.startswith(f"{shard.prefix}/")
    )
    if differing := sorted(set(own) ^ set(held)):
        raise fail(CHECK, f"shard {shard.prefix} differs from its signed statement at {differing[0]}")
    for name in held:
        if sha256_file(base / name) != own[name]:
            raise fail(CHECK, f"shard {shard.prefix} differs from its signed statement at {name}")
    if (info.plan_digest, info.index, info.count) != (merge.plan_digest, shard.index, merge.count):
        raise fail(
            CHECK,
            f"shard {shard.prefix} is shard {info.label} of plan {info.plan_digest[:12]}, not the one {layout.MERGE} names",
        )
    return checks

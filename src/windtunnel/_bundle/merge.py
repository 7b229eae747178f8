"""Put the shards of one plan together (`wt merge`): trust, the shard set's rules, merged checks and run.json.

Every shard is verified against keys the merger was told to trust, never a key the shard carries; the set
must hold one shard per index of one plan digest; the merged checks are recomputed from the shards'
checks.json (a verdict is never copied), each shard's evidence cited under its own prefix. The same
merged-checks rule (merge_checks) is what `wt verify` recomputes from a merged bundle. docs/ci.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from windtunnel._bundle import layout
from windtunnel._bundle.canonical import sha256_hex
from windtunnel._bundle.content import Contents, fail, load_contents
from windtunnel._bundle.dsse import Envelope, envelope_from_json
from windtunnel._bundle.keys import fingerprint_of, keyid_of, load_public_key, signature_valid
from windtunnel._bundle.merge_checks import shard_prefix
from windtunnel._bundle.models import HostInfo, RunInfo, RuntimeInfo, TapeEntry, TapeIndex
from windtunnel._bundle.shard_models import MergedShard, MergeInfo, ShardInfo
from windtunnel._bundle.verify import verify_bundle
from windtunnel.errors import VerificationError


@dataclass(frozen=True, slots=True)
class Shard:
    """A verified shard: `name` is how the user named it (its path), `root` the directory holding it."""

    name: str
    root: Path
    info: ShardInfo
    contents: Contents
    statement_sha256: str
    keyid: str

    @property
    def prefix(self) -> str:
        return shard_prefix(self.info.index)


def verified_shard(name: str, root: Path, trusted: Sequence[bytes]) -> Shard:
    """The shard bundle in directory `root`, verified with whichever trusted key signed it. Raises
    VerificationError (check `merge.shard`) naming the shard and why it cannot be merged."""
    envelope = _envelope(name, root)
    keys = [load_public_key(pem, source="a --trust key") for pem in trusted]
    signer = next((k for k in keys if signature_valid(k, envelope.signatures[0].sig, envelope.pae())), None)
    if signer is None:
        tried = ", ".join(fingerprint_of(keyid_of(k)) for k in keys)
        raise _refuse(
            f"{name} is not signed by a trusted key (trusted: {tried}); pass its signer's key with --trust"
        )
    pem = trusted[keys.index(signer)]
    report = verify_bundle(root, pem)
    if not report.valid:
        raise _refuse(f"{name} is invalid: {report.check}: {report.reason}")
    if not (root / layout.SHARD).is_file():
        raise _refuse(
            f"{name} is not a shard: it has no {layout.SHARD} (certify it with `wt certify --shard I/N`)"
        )
    try:
        info = ShardInfo.model_validate_json((root / layout.SHARD).read_bytes())
    except ValidationError as exc:  # a signed file that does not parse: a bundle of another version
        raise _refuse(f"{name}: {layout.SHARD} does not match its schema ({exc.errors()[0]['msg']})") from exc
    return Shard(
        name=name,
        root=root,
        info=info,
        contents=load_contents(root),
        statement_sha256=sha256_hex(envelope.payload),
        keyid=keyid_of(signer),
    )


def _envelope(name: str, root: Path) -> Envelope:
    path = root / layout.ATTESTATION
    try:
        envelope = envelope_from_json(path.read_bytes(), source=f"{name}: {layout.ATTESTATION}")
    except OSError as exc:
        raise _refuse(
            f"{name} is unsigned: {layout.ATTESTATION} cannot be read ({exc.strerror or exc})"
        ) from exc
    except VerificationError as exc:
        raise _refuse(f"{name} is invalid: {exc.message}") from exc
    if len(envelope.signatures) != 1:
        raise _refuse(
            f"{name} is invalid: its envelope has {len(envelope.signatures)} signatures, expected one"
        )
    return envelope


def check_shard_set(shards: Sequence[Shard], *, control: str) -> MergeInfo:
    """One shard per index of one plan digest, or a refusal naming every shard that is missing,
    duplicated, extra or foreign. `control` is the runtime every shard runs besides its part."""
    if not shards:
        raise _refuse("no shard to merge")
    plan = Counter(s.info.plan_digest for s in shards).most_common(1)[0][0]  # ties: the first named
    problems = [
        f"{s.name} is foreign: it is shard {s.info.label} of plan {s.info.plan_digest[:12]}, not of plan {plan[:12]}"
        for s in shards
        if s.info.plan_digest != plan
    ]
    ours = [s for s in shards if s.info.plan_digest == plan]
    count = Counter(s.info.count for s in ours).most_common(1)[0][0]
    problems += [
        f"{s.name} is extra: it is shard {s.info.label}, of a {s.info.count}-way split where the others are "
        f"of a {count}-way one"
        for s in ours
        if s.info.count != count
    ]
    by_index: dict[int, list[Shard]] = {}
    for s in ours:
        if s.info.count == count:
            by_index.setdefault(s.info.index, []).append(s)
    for index in range(1, count + 1):
        found = by_index.get(index, [])
        if not found:
            problems.append(f"shard {index}/{count} of plan {plan[:12]} is missing")
        elif len(found) > 1:
            problems.append(
                f"{' and '.join(s.name for s in found)} are each shard {index}/{count}: one is a duplicate"
            )
    problems += [problem for s in ours for problem in _outside_its_part(s, control)]
    if problems:
        raise _refuse("cannot merge: " + "; ".join(problems))
    ordered = [by_index[index][0] for index in range(1, count + 1)]
    return MergeInfo(
        plan_digest=plan,
        count=count,
        shards=[
            MergedShard(
                index=s.info.index,
                prefix=s.prefix,
                statement_sha256=s.statement_sha256,
                keyid=s.keyid,
                run_id=s.contents.run.run_id,
                units=s.info.units,
            )
            for s in ordered
        ],
    )


def _outside_its_part(shard: Shard, control: str) -> list[str]:
    """A shard certifies its part of the plan and the control, nothing else, and all of its part."""
    certified = {runtime.name for runtime in shard.contents.run.runtimes}
    part = set(shard.info.units)
    problems = [
        f"{shard.name} certifies {name}, which is not in its part of the plan"
        for name in sorted(certified - part - {control})
    ]
    problems += [f"{shard.name} does not certify {name} of its part" for name in sorted(part - certified)]
    return problems


def merged_run(shards: Sequence[Shard], *, run_id: str, tool_version: str, host: HostInfo) -> RunInfo:
    """run.json of the merged bundle: the shards' span of time, each runtime as the shard that certified it
    recorded it (the control as the first shard did), every image and sweep under its shard's prefix."""
    runs = [s.contents.run for s in shards]
    runtimes: dict[str, RuntimeInfo] = {}
    for shard in shards:
        for runtime in shard.contents.run.runtimes:
            if runtime.name in shard.info.units or runtime.name not in runtimes:
                runtimes[runtime.name] = runtime
    commits = {run.git_commit for run in runs}
    return RunInfo(
        run_id=run_id,
        tool_version=tool_version,
        suite_version=runs[0].suite_version,
        requirement_set=runs[0].requirement_set,
        git_commit=commits.pop() if len(commits) == 1 else None,
        host=host,
        started_at=min(run.started_at for run in runs),
        ended_at=max(run.ended_at for run in runs),
        runtimes=list(runtimes.values()),
        images={
            f"{s.prefix}/{name}": digest for s in shards for name, digest in s.contents.run.images.items()
        },
        swept=[f"{s.prefix}: {line}" for s in shards for line in s.contents.run.swept],
        tiers=runs[0].tiers,
    )


def merged_tapes(shards: Sequence[Shard]) -> TapeIndex:
    """Every tape a shard replayed, once (by name, as the first shard listed it)."""
    tapes: dict[str, TapeEntry] = {}
    for shard in shards:
        for tape in shard.contents.tapes.tapes if shard.contents.tapes is not None else []:
            tapes.setdefault(tape.name, tape)
    return TapeIndex(tapes=list(tapes.values()))


def _refuse(message: str) -> VerificationError:
    return fail("merge.shard", message)

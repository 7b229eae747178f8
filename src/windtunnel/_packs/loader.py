"""Finding packs: a directory with pack.py, a `module:attr` reference, or the `windtunnel.packs` group."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import logging
import re
import sys
from collections.abc import Collection, Sequence
from fnmatch import fnmatchcase
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType

from windtunnel._packs.pack import Pack
from windtunnel.errors import PackError, WindTunnelError

PACK_FILE = "pack.py"
ENTRY_POINT_GROUP = "windtunnel.packs"
log = logging.getLogger("windtunnel.packs")
KIT_PACK = Path(__file__).parent / "kitpack"
"""The conformance kit's own pack (a notes service): the kit's checks, the reset canary and the container
plan's kit services all run its mocks."""


MEDIA_PACK = Path(__file__).parent / "mediapack"
"""The mcp_client checks' pack: tools whose results are images, mixed content and embedded resources."""


def kit_pack() -> Pack:
    return load_pack(str(KIT_PACK))


def media_pack() -> Pack:
    return load_pack(str(MEDIA_PACK))


def load_pack(ref: str, *, base: Path | None = None) -> Pack:
    """Load one pack from a path (directory or pack.py), a `module:attr`, or an entry-point name."""
    path = Path(ref) if base is None or Path(ref).is_absolute() else base / ref
    if path.exists():
        return _load_path(path)
    if ":" in ref:
        return _load_attr(ref)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == ref:
            return _entry_pack(entry)
    known = sorted(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))
    raise PackError(
        f"no pack {ref!r}: it is not a path, a module:attr, or a registered pack "
        f"(registered: {', '.join(known) or 'none'})",
        hint="pass a directory holding pack.py, a module:attr, or install the package that provides it",
        pack=ref,
    )


def discover_packs(refs: Sequence[str], *, base: Path, wanted: Sequence[str] | None = None) -> list[Pack]:
    """Load the configured packs in order; with none configured, every registered pack and ./scenarios/*.

    A pack of ./scenarios wins over a registered pack of the same name (the project's own packs
    come first), as configured packs do in `wt run --pack NAME`.

    `wanted` are the --pack names or globs asked for (None: no --pack was given). A registered
    pack that fails to load is an error naming its entry point when it could be among those asked
    for (no --pack, or a --pack value matching its entry-point name), and otherwise a warning: a
    broken package nobody selected must not stop a run of other packs.
    """
    if refs:
        packs = [load_pack(ref, base=base) for ref in refs]
    else:
        bundled = base / "scenarios"
        local = (
            [_load_path(child) for child in sorted(bundled.iterdir()) if (child / PACK_FILE).is_file()]
            if bundled.is_dir()
            else []
        )
        packs = [*shadowed(installed_packs(wanted), {pack.name for pack in local}), *local]
    names = [pack.name for pack in packs]
    for name in names:
        if names.count(name) > 1:
            raise PackError(
                f"two packs are named {name!r}", hint="rename one of them or load only one", pack=name
            )
    return packs


def shadowed(installed: Sequence[Pack], taken: Collection[str]) -> list[Pack]:
    """The installed packs whose name no project pack has taken: a project pack wins a name."""
    for pack in installed:
        if pack.name in taken:
            log.info("installed pack %r is shadowed by the project's pack of that name", pack.name)
    return [pack for pack in installed if pack.name not in taken]


def installed_packs(wanted: Sequence[str] | None = None) -> list[Pack]:
    """Every pack registered under the `windtunnel.packs` entry-point group; see discover_packs for `wanted`."""
    packs: list[Pack] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            packs.append(_entry_pack(entry))
        except WindTunnelError as exc:
            if wanted is None or any(fnmatchcase(entry.name, value) for value in wanted):
                raise
            log.warning("skipping installed pack %r (not selected): %s", entry.name, exc.message)
    return packs


def _entry_pack(entry: EntryPoint) -> Pack:
    where = f"installed pack {entry.name!r} (entry point {entry.name} = {entry.value}{_package(entry)})"
    try:
        value = entry.load()
    except WindTunnelError as exc:  # the pack module itself raised ours (a bad scenario): keep its fix
        raise PackError(
            f"{where}: {exc.message}", hint=exc.hint, pack=entry.name, entry_point=entry.value
        ) from exc
    except Exception as exc:
        raise PackError(
            f"{where} failed to load: {type(exc).__name__}: {exc}",
            hint="fix or reinstall the package that registers it, uninstall it, or select other packs "
            "with --pack",
            pack=entry.name,
            entry_point=entry.value,
        ) from exc
    return _as_pack(value, where)


def _package(entry: EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return f", package {dist.name}" if dist is not None and getattr(dist, "name", None) else ""


def _load_path(path: Path) -> Pack:
    file = path / PACK_FILE if path.is_dir() else path
    if not file.is_file():
        raise PackError(
            f"{path} holds no {PACK_FILE}",
            hint=f"a pack directory needs a {PACK_FILE} that defines PACK = Pack(...)",
            path=str(path),
        )
    module = _import_file(file)
    value = getattr(module, "PACK", None)
    if value is None and callable(getattr(module, "make_pack", None)):
        value = _safe_load(str(file), module.make_pack)
        if value is None:
            raise PackError(
                f"{file}: make_pack() returned None, not a windtunnel.api.Pack",
                hint="end make_pack() with return Pack(name=..., scenarios=[...])",
                path=str(file),
            )
    if value is None:
        raise PackError(
            f"{file} defines neither PACK nor make_pack()",
            hint="end the file with PACK = Pack(name=..., scenarios=[...])",
            path=str(file),
        )
    pack = _as_pack(value, str(file))
    return dataclasses.replace(pack, root=file.parent.resolve()) if pack.root is None else pack


def _import_file(file: Path) -> ModuleType:
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:10]
    name = f"_wt_pack_{re.sub(r'[^0-9a-zA-Z_]', '_', file.parent.name)}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file, submodule_search_locations=[str(file.parent)])
    if spec is None or spec.loader is None:
        raise PackError(f"cannot import {file}", hint="check that it is a Python file", path=str(file))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except WindTunnelError as exc:
        sys.modules.pop(name, None)
        exc.message = f"{file}: {exc.message}"
        exc.context.setdefault("path", str(file))
        raise
    except SystemExit as exc:
        sys.modules.pop(name, None)
        raise _exited(file, exc) from None
    except Exception as exc:
        sys.modules.pop(name, None)
        raise PackError(
            f"{file} failed to import: {type(exc).__name__}: {exc}",
            hint="run `python " + str(file) + "` to see the full error and fix it",
            path=str(file),
        ) from exc
    except BaseException:  # an interrupt: a half-imported pack must not stay importable either
        sys.modules.pop(name, None)
        raise
    return module


def _exited(file: Path, exc: SystemExit) -> PackError:
    """A pack must not end the process, least of all silently with its own exit code."""
    return PackError(
        f"{file} called sys.exit({exc.code!r}) while being imported; a pack must not exit the process",
        hint="remove the sys.exit() (or what calls it) from the pack's top level; raise an exception instead",
        path=str(file),
    )


def _load_attr(ref: str) -> Pack:
    module_name, _, attr = ref.partition(":")

    def load() -> object:
        value: object = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
        return value

    return _as_pack(_safe_load(ref, load), ref)


def _safe_load(where: str, load: object) -> object:
    try:
        return load()  # type: ignore[operator]
    except WindTunnelError:
        raise
    except SystemExit as exc:
        raise PackError(
            f"pack {where} called sys.exit({exc.code!r}) while loading; a pack must not exit the process",
            hint="remove the sys.exit() from the pack's module or factory; raise an exception instead",
            pack=where,
        ) from None
    except Exception as exc:
        raise PackError(
            f"pack {where} failed to load: {type(exc).__name__}: {exc}",
            hint="check the module path and that the package is installed",
            pack=where,
        ) from exc


def _as_pack(value: object, where: str) -> Pack:
    if callable(value) and not isinstance(value, Pack):
        value = _safe_load(where, value)
    if not isinstance(value, Pack):
        raise PackError(
            f"{where} gave a {type(value).__name__}, not a windtunnel.api.Pack",
            hint="point it at a Pack(...) value or a function returning one",
            pack=where,
        )
    return value

#!/usr/bin/env python3
"""Checks that every build compiles the same C core: the one list.

core/sources.txt lists the core's .c files. CMakeLists.txt, setup.py and
the rock's makefile (the one the rockspec names) read it. This compares,
file by file, five lists that must be equal:
  core/src     the .c files actually under core/src/
  sources.txt  core/sources.txt
  CMake        what CMake compiles into hiredlock_objects (a configure run,
               read back from compile_commands.json)
  setup.py     the core files of the extension setup.py builds
  rockspec     the core files the rockspec's build compiles into
               hiredlock.core (its makefile's print-sources)
and the rock's other files against bindings/lua/*.c. Prints each
difference and exits 1 when there is one.

Then, unless --no-selftest, it shows that it can fail: on copies of the tree
it makes one drift at a time (a new file nobody lists, a file missing from
each list) and expects a failure that names the file.

    scripts/check-sources.py [--root DIR] [--no-selftest]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROCKSPEC = "hiredlock-*.rockspec"
ROCK_MK = "bindings/lua/rock.mk"
LISTS = ["core/src", "sources.txt", "CMake", "setup.py", "rockspec"]

# Prints the rockspec's build type and makefile, as LuaRocks reads them
# (the rockspec is Lua that sets globals).
ROCKSPEC_LUA = """
local env = {}
local chunk
if setfenv then
  chunk = assert(loadfile(arg[1]))
  setfenv(chunk, env)
else
  chunk = assert(loadfile(arg[1], "t", env))
end
chunk()
print(env.build.type, env.build.makefile)
"""


def on_disk(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "core/src").rglob("*.c"))


def from_sources_txt(root: Path) -> list[str]:
    lines = (root / "core/sources.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and line[0] != "#"]


def from_cmake(root: Path, build: Path) -> list[str]:
    """What CMake compiles into hiredlock_objects, from a configure run."""
    shutil.rmtree(build, ignore_errors=True)
    run = subprocess.run(
        [
            "cmake", "-S", str(root), "-B", str(build),
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            "-DHRL_TESTS=OFF", "-DHRL_BENCH=OFF",
        ],
        capture_output=True, text=True,
    )  # fmt: skip
    if run.returncode != 0:
        raise RuntimeError(f"cmake configure failed:\n{run.stdout}{run.stderr}")
    entries = json.loads((build / "compile_commands.json").read_text())
    return sorted(
        str(Path(e["file"]).resolve().relative_to(root.resolve()))
        for e in entries
        if "hiredlock_objects.dir" in e.get("output", e["command"])
    )


def from_setup_py(root: Path) -> list[str]:
    """The core files of the extension setup.py builds (setup.py imported,
    not run: it only calls setup() as __main__)."""
    spec = importlib.util.spec_from_file_location("hrl_setup", root / "setup.py")
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
        sources = module.extension().sources
    return sorted(s for s in sources if not s.startswith("bindings/"))


def from_rockspec(root: Path) -> tuple[list[str], list[str]]:
    """(core files, other files) the rockspec's build compiles into
    hiredlock.core: its makefile's print-sources, run as LuaRocks runs it
    (from the rock's root)."""
    (rockspec,) = root.glob(ROCKSPEC)
    lua = next(filter(shutil.which, ["lua5.1", "luajit", "lua5.4"]), None)
    if lua is None:
        raise RuntimeError("no Lua interpreter (scripts/install-deps.sh lua)")
    kind, makefile = subprocess.run(
        [lua, "-", str(rockspec)],
        input=ROCKSPEC_LUA, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    if kind != "make":
        raise RuntimeError(f"{rockspec.name}: build.type is {kind}, not make")
    out = subprocess.run(
        ["make", "--no-print-directory", "-f", makefile, "print-sources"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    core = sorted(s for s in out if s.startswith("core/"))
    return core, sorted(s for s in out if not s.startswith("core/"))


def drifts(root: Path, build: Path) -> tuple[list[str], int]:
    """(the differences found, the number of core files on disk)."""
    disk = on_disk(root)
    lists = {"core/src": disk, "sources.txt": from_sources_txt(root)}
    try:
        lists["CMake"] = from_cmake(root, build)
    except RuntimeError as err:
        return [f"CMake: {err}"], len(disk)
    lists["setup.py"] = from_setup_py(root)
    lists["rockspec"], rock_bindings = from_rockspec(root)
    found = []
    for name in LISTS[1:]:
        have = lists[name]
        found += [
            f"{name} lists {f}, which is not in core/src/"
            for f in have
            if f not in disk
        ]
        found += [
            f"{name} lacks {f}, which is in core/src/" for f in disk if f not in have
        ]
        dup = sorted({f for f in have if have.count(f) > 1})
        found += [f"{name} lists {f} twice" for f in dup]
    bindings = sorted(
        str(p.relative_to(root)) for p in (root / "bindings/lua").glob("*.c")
    )
    found += [
        f"rockspec lists {f}, which is not in bindings/lua/"
        for f in rock_bindings
        if f not in bindings
    ]
    found += [
        f"rockspec lacks {f}, which is in bindings/lua/"
        for f in bindings
        if f not in rock_bindings
    ]
    return found, len(disk)


def copy_tree(root: Path, dest: Path) -> Path:
    """The files the lists are read from, copied to dest."""
    for name in ["CMakeLists.txt", "setup.py", next(root.glob(ROCKSPEC)).name]:
        shutil.copy2(root / name, dest / name)
    for name in ["core", "bindings", "examples"]:
        shutil.copytree(
            root / name, dest / name, ignore=shutil.ignore_patterns("*.o", "*.so")
        )
    return dest


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    if text.count(old) < 1:
        raise AssertionError(f"selftest: {old!r} is no longer in {path.name}")
    path.write_text(text.replace(old, new, count))


def selftest(root: Path, work: Path) -> tuple[int, int]:
    """Makes each drift in a copy of the tree; (caught, made)."""
    victim = "core/src/proto/url.c"
    mutations = {
        "a new core file nobody lists": (
            "core/src/proto/drift.c",
            lambda t: (t / "core/src/proto/drift.c").write_text("int hrl_drift;\n"),
        ),
        "the rock's build drops a file": (
            victim,
            lambda t: edit(
                t / ROCK_MK,
                "\nOBJS :=",
                f"\nCORE_SOURCES := $(filter-out {victim},$(CORE_SOURCES))\nOBJS :=",
            ),
        ),
        "core/sources.txt drops a file": (
            victim,
            lambda t: edit(t / "core/sources.txt", f"{victim}\n", ""),
        ),
        "CMake drops a file": (
            victim,
            lambda t: edit(
                t / "CMakeLists.txt",
                "list(TRANSFORM HRL_CORE_SOURCES",
                f"list(REMOVE_ITEM HRL_CORE_SOURCES {victim})\n"
                "list(TRANSFORM HRL_CORE_SOURCES",
            ),
        ),
        "setup.py drops a file": (
            victim,
            lambda t: edit(
                t / "setup.py",
                "*core_sources()]",
                f"*(s for s in core_sources() if s != {victim!r})]",
            ),
        ),
        "the rock's build drops a Lua binding file": (
            "bindings/lua/lock.c",
            lambda t: edit(
                t / ROCK_MK,
                "\nOBJS :=",
                "\nBINDING_SOURCES := $(filter-out bindings/lua/lock.c,"
                "$(BINDING_SOURCES))\nOBJS :=",
            ),
        ),
    }
    caught = 0
    for what, (culprit, mutate) in mutations.items():
        tree = work / "tree"
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        mutate(copy_tree(root, tree))
        found, _ = drifts(tree, work / "cmake")
        if any(culprit in line for line in found):
            caught += 1
        else:
            print(f"sources: selftest: {what}: not caught ({found or 'no difference'})")
    return caught, len(mutations)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--no-selftest", action="store_true")
    args = ap.parse_args()
    root = args.root.resolve()
    (root / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sources.", dir=root / "build") as tmp:
        work = Path(tmp)
        found, count = drifts(root, work / "cmake")
        for line in found:
            print(f"sources: {line}")
        caught = made = 0
        if not args.no_selftest:
            caught, made = selftest(root, work)
    if found:
        line = f"sources: FAILED: {len(found)} differences between {', '.join(LISTS)}"
    else:
        line = f"sources: ok: {count} core files, the same in {', '.join(LISTS)}"
    if not args.no_selftest:
        line += f"; {caught} of {made} drifts caught"
    print(line)
    return 0 if not found and caught == made else 1


if __name__ == "__main__":
    sys.exit(main())

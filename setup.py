"""Builds hiredlock: the Python package over the hiredlock C core.

The extension hiredlock._core is compiled from bindings/python/*.c with the
core's sources (the list in core/sources.txt, which CMake reads too) and
hiredis compiled in, so a C compiler and Python's headers are all a build
needs. The environment chooses the rest:

  HIREDLOCK_HIREDIS=bundled  (the default) hiredis from vendor/hiredis/, the
                             pinned copy (scripts/vendor-hiredis.sh), into a
                             static library of this build, symbols hidden
  HIREDLOCK_HIREDIS=system   the system's hiredis, found with pkg-config
                             (what the test suites build against)
  HIREDLOCK_TLS=auto         (the default) TLS (rediss://) over OpenSSL when
                             pkg-config finds it; without it the build goes
                             on, and rediss:// masters are refused with the
                             core's one message (core/src/driver/tls_none.c)
  HIREDLOCK_TLS=on | off     OpenSSL required / left out
  HIREDLOCK_WERROR=1         warnings are errors (the project's own suites)

The version is read from the one public header, core/include/hiredlock.h.
Every build compiles everything in a build tree of its own, build/python-
build.XXXXXX, removed when it ends: objects of another configuration (other
switches, another hiredis) are never reused.
"""

import atexit
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from glob import glob

from setuptools import Extension, find_packages, setup

ROOT = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join("core", "include", "hiredlock.h")
SOURCES = os.path.join("core", "sources.txt")
VENDOR_HIREDIS = os.path.join("vendor", "hiredis")
# What the blocking API and the reader need (async.c: hiredis.c calls it).
HIREDIS_SOURCES = ["alloc", "async", "hiredis", "net", "read", "sds", "sockcompat"]


def choice(name, allowed):
    value = os.environ.get(name, allowed[0])
    if value not in allowed:
        sys.exit(f"setup.py: {name}={value!r}: use one of {', '.join(allowed)}")
    return value


def read_version():
    with open(os.path.join(ROOT, HEADER), encoding="utf-8") as f:
        match = re.search(
            r'^#define HIREDLOCK_VERSION "([0-9]+\.[0-9]+\.[0-9]+)"',
            f.read(),
            re.MULTILINE,
        )
    if match is None:
        sys.exit(f"setup.py: no HIREDLOCK_VERSION in {HEADER}")
    return match.group(1)


def core_sources():
    """The core's .c files as core/sources.txt lists them (the one list)."""
    with open(os.path.join(ROOT, SOURCES), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and line[0] != "#"]


def files(pattern):
    """The files matching pattern under ROOT, relative to it, sorted."""
    return sorted(
        os.path.relpath(path, ROOT)
        for path in glob(os.path.join(ROOT, pattern), recursive=True)
    )


def pkg_config(*args):
    """The words pkg-config prints for args, or None when it cannot (no
    pkg-config, or no such package)."""
    try:
        out = subprocess.run(
            ["pkg-config", *args], check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return shlex.split(out)


class Flags:
    """Compiler and linker words gathered from pkg-config and the choices."""

    def __init__(self):
        self.include_dirs, self.cflags, self.macros = [], [], []
        self.libraries, self.library_dirs, self.ldflags = [], [], []

    def add(self, packages, what):
        cflags, libs = (
            pkg_config("--cflags", *packages),
            pkg_config("--libs", *packages),
        )
        if cflags is None or libs is None:
            return False
        for word in cflags:
            if word.startswith("-I"):
                # The core includes <hiredis/hiredis.h>; pkg-config names the
                # folder holding hiredis.h itself.
                path = word[2:].rstrip("/")
                if os.path.basename(path) == "hiredis":
                    self.include_dirs.append(os.path.dirname(path))
                self.include_dirs.append(path)
            else:
                self.cflags.append(word)
        for word in libs:
            if word.startswith("-l"):
                self.libraries.append(word[2:])
            elif word.startswith("-L"):
                self.library_dirs.append(word[2:])
            else:
                self.ldflags.append(word)
        print(f"setup.py: {what}", file=sys.stderr)
        return True


def configure():
    """(flags, the bundled hiredis library for build_clib or None)."""
    flags = Flags()
    bundled = None
    if choice("HIREDLOCK_HIREDIS", ["bundled", "system"]) == "system":
        if not flags.add(["hiredis"], "hiredis: the system's (pkg-config)"):
            sys.exit(
                "setup.py: HIREDLOCK_HIREDIS=system, but pkg-config finds no "
                "hiredis (Debian: apt-get install libhiredis-dev pkg-config); "
                "unset it to build with the bundled hiredis"
            )
    else:
        flags.include_dirs.append("vendor")  # <hiredis/hiredis.h>
        bundled = (
            "hiredlock_hiredis",
            {
                "sources": [
                    os.path.join(VENDOR_HIREDIS, f"{name}.c")
                    for name in HIREDIS_SOURCES
                ],
                "obj_deps": {"": files("vendor/hiredis/*.h")},
                # hiredis's own flags (its Makefile: -std=c99); its symbols
                # stay inside the extension.
                "cflags": ["-std=c99", "-fvisibility=hidden"],
            },
        )
        print(f"setup.py: hiredis: bundled ({VENDOR_HIREDIS})", file=sys.stderr)
    tls = choice("HIREDLOCK_TLS", ["auto", "on", "off"])
    if tls == "off" or not flags.add(["openssl"], "TLS: OpenSSL (pkg-config)"):
        if tls == "on":
            sys.exit(
                "setup.py: HIREDLOCK_TLS=on, but pkg-config finds no OpenSSL "
                "(Debian: apt-get install libssl-dev pkg-config)"
            )
        flags.macros.append(("HRL_NO_TLS", None))
        print(
            "setup.py: TLS: none (OpenSSL not found with pkg-config, or "
            "HIREDLOCK_TLS=off): rediss:// masters will be refused",
            file=sys.stderr,
        )
    return flags, bundled


def extension(flags=None):
    flags = flags or Flags()
    return Extension(
        "hiredlock._core",
        sources=[*files("bindings/python/*.c"), *core_sources()],
        depends=[
            *files("bindings/python/*.h"),
            *files("core/src/**/*.h"),
            *files("core/include/**/*.h"),
        ],
        include_dirs=["core/include", "core/src", *flags.include_dirs],
        define_macros=flags.macros,
        libraries=[*flags.libraries, "pthread", "m"],
        library_dirs=flags.library_dirs,
        # Warnings are errors in the project's own suites (HIREDLOCK_WERROR=1),
        # never in a user's `pip install`, where a newer compiler's new
        # warning must not stop the install.
        extra_compile_args=[
            "-std=c11",
            "-Wall",
            "-Wextra",
            *(["-Werror"] if os.environ.get("HIREDLOCK_WERROR") == "1" else []),
            "-fvisibility=hidden",
            *flags.cflags,
        ],
        extra_link_args=flags.ldflags,
    )


def fresh_build_dir():
    """A build tree of this run's own under build/, removed at exit."""
    os.makedirs("build", exist_ok=True)
    path = tempfile.mkdtemp(prefix="python-build.", dir="build")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return os.path.relpath(path)


def main():
    os.chdir(ROOT)  # setuptools wants the source paths relative to setup.py
    flags, bundled = configure()
    build_dir = fresh_build_dir()
    setup(
        version=read_version(),
        package_dir={"": "python"},
        # Every package under python/ (hiredlock.asyncio and any new one);
        # every module of a package is taken with it.
        packages=find_packages("python"),
        package_data={"": ["py.typed", "*.pyi"]},
        libraries=[bundled] if bundled else [],
        ext_modules=[extension(flags)],
        options={
            "build": {"build_base": build_dir},
            "egg_info": {"egg_base": build_dir},
        },
        zip_safe=False,
    )


# setuptools runs this file as __main__; scripts/check-sources.py imports it
# to read the extension's sources.
if __name__ == "__main__":
    main()

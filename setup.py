"""Builds hiredlock: the Python package over the hiredlock C core.

The extension hiredlock._core is compiled from bindings/python/*.c with the
core's sources (the list in core/sources.txt, which CMake reads too) compiled
in, so nothing but hiredis and OpenSSL (TLS, rediss://) needs to be
installed; both are found with pkg-config. The version is read from the one
public header, core/include/hiredlock.h. Build files go to
build/python-build/, with every other build output under build/.
"""

import os
import re
import shlex
import subprocess
import sys
from glob import glob

from setuptools import Extension, setup

ROOT = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join("core", "include", "hiredlock.h")
SOURCES = os.path.join("core", "sources.txt")
BUILD_DIR = os.path.join("build", "python-build")


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


def pkg_config(option):
    """The words pkg-config prints for hiredis and OpenSSL, or exit with
    what to do."""
    try:
        out = subprocess.run(
            ["pkg-config", option, "hiredis", "openssl"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        sys.exit(
            "setup.py: hiredis or OpenSSL was not found with pkg-config "
            f"({err}); install them first (Debian: apt-get install "
            "libhiredis-dev libssl-dev pkg-config python3-dev)"
        )
    return shlex.split(out)


def hiredis_flags():
    include_dirs, cflags = [], []
    for word in pkg_config("--cflags"):
        if word.startswith("-I"):
            # The core includes <hiredis/hiredis.h>; pkg-config names the
            # folder holding hiredis.h itself.
            path = word[2:].rstrip("/")
            if os.path.basename(path) == "hiredis":
                include_dirs.append(os.path.dirname(path))
            include_dirs.append(path)
        else:
            cflags.append(word)
    libraries, library_dirs, ldflags = [], [], []
    for word in pkg_config("--libs"):
        if word.startswith("-l"):
            libraries.append(word[2:])
        elif word.startswith("-L"):
            library_dirs.append(word[2:])
        else:
            ldflags.append(word)
    return include_dirs, cflags, libraries, library_dirs, ldflags


def extension():
    include_dirs, cflags, libraries, library_dirs, ldflags = hiredis_flags()
    return Extension(
        "hiredlock._core",
        sources=[*files("bindings/python/*.c"), *core_sources()],
        depends=[
            *files("bindings/python/*.h"),
            *files("core/src/**/*.h"),
            *files("core/include/**/*.h"),
        ],
        include_dirs=["core/include", "core/src", *include_dirs],
        libraries=[*libraries, "pthread", "m"],
        library_dirs=library_dirs,
        # Warnings are errors in the project's own suites (HIREDLOCK_WERROR=1),
        # never in a user's `pip install`, where a newer compiler's new
        # warning must not stop the install.
        extra_compile_args=[
            "-std=c11",
            "-Wall",
            "-Wextra",
            *(["-Werror"] if os.environ.get("HIREDLOCK_WERROR") == "1" else []),
            "-fvisibility=hidden",
            *cflags,
        ],
        extra_link_args=ldflags,
    )


def main():
    os.chdir(ROOT)  # setuptools wants the source paths relative to setup.py
    os.makedirs(BUILD_DIR, exist_ok=True)
    setup(
        version=read_version(),
        package_dir={"": "python"},
        packages=["hiredlock", "hiredlock.asyncio"],
        package_data={"hiredlock": ["py.typed", "*.pyi"]},
        ext_modules=[extension()],
        options={
            "build": {"build_base": BUILD_DIR},
            "egg_info": {"egg_base": BUILD_DIR},
        },
        zip_safe=False,
    )


# setuptools runs this file as __main__; scripts/check-sources.py imports it
# to read the extension's sources.
if __name__ == "__main__":
    main()

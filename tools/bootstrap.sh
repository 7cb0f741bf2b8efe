#!/bin/bash
# From a fresh clone to built binaries, in the source tree: missing Debian packages (as root),
# autoreconf and configure when not done yet, then make.
set -euo pipefail

cd "$(dirname "$0")/.."
tools/install-deps.sh
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc)"

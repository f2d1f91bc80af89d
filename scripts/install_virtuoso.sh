#!/usr/bin/env bash
# Install Virtuoso Open Source (server + isql) for the endpoint tests (tests/virtuoso.py).
# Debian/Ubuntu; uses sudo when not root.  Only the binaries are installed: no system service
# is started or configured (the tests start their own throw-away server on 127.0.0.1).
set -euo pipefail

have_virtuoso() {
    command -v virtuoso-t >/dev/null 2>&1 && { command -v isql-vt >/dev/null 2>&1 || command -v isql-v >/dev/null 2>&1; }
}

if have_virtuoso; then
    echo "virtuoso: already installed ($(command -v virtuoso-t))"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "virtuoso: apt-get not found; install Virtuoso Open Source 7 by hand (virtuoso-t and isql-vt on PATH)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# The -bin package has the server and isql without the debconf-configured system service.
for pkg in virtuoso-opensource-7-bin virtuoso-opensource; do
    if apt-cache show "$pkg" >/dev/null 2>&1; then
        $SUDO apt-get install -y -q --no-install-recommends "$pkg"
        break
    fi
done

if ! have_virtuoso; then
    echo "virtuoso: installation failed (no virtuoso-t/isql-vt on PATH)" >&2
    exit 1
fi
echo "virtuoso: installed $(command -v virtuoso-t)"

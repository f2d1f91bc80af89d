#!/usr/bin/env bash
# Install Virtuoso Open Source (server + isql) for the endpoint tests (tests/virtuoso.py).
# Debian/Ubuntu; uses sudo when not root.  Only the binaries are installed: no system service
# is started or configured (the tests start their own throw-away server on 127.0.0.1).
set -euo pipefail
source "$(dirname "$0")/apt_lib.sh"

have_it() {
    command -v virtuoso-t >/dev/null 2>&1 && { command -v isql-vt >/dev/null 2>&1 || command -v isql-v >/dev/null 2>&1; }
}

# The -bin package has the server and isql without the debconf-configured system service.
apt_install_if_missing virtuoso "virtuoso-opensource-7-bin|virtuoso-opensource"

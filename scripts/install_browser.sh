#!/usr/bin/env bash
# Install Debian's chromium + chromedriver for the page's headless browser test (tests/test_serve_page.py).
# Debian/Ubuntu; uses sudo when not root; apt-get runs only when one of them is missing.
set -euo pipefail
source "$(dirname "$0")/apt_lib.sh"

have_it() {
    { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } \
        && command -v chromedriver >/dev/null 2>&1
}

apt_install_if_missing browser chromium chromium-driver

#!/usr/bin/env bash
# Install Debian's chromium + chromedriver for the page's headless browser test (tests/test_serve_page.py).
# Debian/Ubuntu; uses sudo when not root; apt-get runs only when one of them is missing.
set -euo pipefail

have_browser() {
    { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } \
        && command -v chromedriver >/dev/null 2>&1
}

if have_browser; then
    echo "browser: already installed ($(command -v chromium || command -v chromium-browser), $(command -v chromedriver))"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "browser: apt-get not found; install chromium and its matching chromedriver by hand (both on PATH)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium chromium-driver

if ! have_browser; then
    echo "browser: installation failed (no chromium/chromedriver on PATH)" >&2
    exit 1
fi
echo "browser: installed $(command -v chromium) and $(command -v chromedriver)"

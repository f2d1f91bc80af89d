# Shared by scripts/install_*.sh (source it): install Debian packages for a test dependency only when missing.
# The caller defines have_it (true when the tools are on PATH) before calling apt_install_if_missing.

# apt_install_if_missing LABEL PACKAGE...: each PACKAGE may be "a|b" (the first one apt knows is installed).
apt_install_if_missing() {
    local label=$1
    shift
    if have_it; then
        echo "$label: already installed"
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$label: apt-get not found; install it by hand (see this script for what the tests need on PATH)" >&2
        return 1
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    local choice pkg
    for choice in "$@"; do
        for pkg in ${choice//|/ }; do
            if apt-cache show "$pkg" >/dev/null 2>&1; then
                $sudo apt-get install -y -q --no-install-recommends "$pkg"
                break
            fi
        done
    done
    if ! have_it; then
        echo "$label: installation failed (the tools are still not on PATH)" >&2
        return 1
    fi
    echo "$label: installed"
}

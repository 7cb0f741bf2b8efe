#!/bin/bash
# Installs the Debian packages of tools/debian-packages.txt that are missing (as root, without
# prompts, and without starting any service they ship: nginx, MariaDB and PostgreSQL stay
# stopped; the tests start throwaway database servers of their own with t/db/*.sh).
#   tools/install-deps.sh [--update]     (--update: always run apt-get update first)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mapfile -t wanted < <(grep -v '^[[:space:]]*$' "$here/debian-packages.txt")
missing=()
for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ] && [ "${1:-}" != "--update" ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "missing Debian packages; as root run:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
fi

# policy-rc.d answering 101 tells invoke-rc.d / deb-systemd-invoke not to start services.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod 0755 "$policy"
    trap 'rm -f "$policy"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

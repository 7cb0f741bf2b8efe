#!/bin/bash
# Installs the Debian packages of tools/debian-packages.txt that are missing (as root, without
# prompts, and without starting any service they ship: nginx, MariaDB and PostgreSQL stay
# stopped; the tests start throwaway database servers of their own with t/db/*.sh).
#   tools/install-deps.sh [--update]     (--update: always run apt-get update first)
# Then the OpenAPI linter from the npm registry, pinned by tools/openapi/package-lock.json
# (npm ci into tools/openapi/node_modules; again only when the lock file changed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

# npm ci of tools/openapi when its node_modules were not installed from this very lock file.
install_npm_tools() {
    local dir=$here/openapi
    if cmp -s "$dir/package-lock.json" "$dir/node_modules/.notesd-installed-lock" 2>/dev/null; then
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "npm is missing (Node.js with npm: Debian's nodejs and npm packages)" >&2
        return 1
    fi
    echo "installing the OpenAPI linter (npm ci in $dir)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$dir/node_modules/.notesd-installed-lock"
}

mapfile -t wanted < <(grep -v '^[[:space:]]*$' "$here/debian-packages.txt")
missing=()
for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ! command -v npm >/dev/null 2>&1; then
    missing+=(nodejs npm)  # only when no Node.js with npm is installed at all
fi
if [ ${#missing[@]} -eq 0 ] && [ "${1:-}" != "--update" ]; then
    install_npm_tools
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
install_npm_tools

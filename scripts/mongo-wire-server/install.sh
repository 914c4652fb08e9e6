#!/usr/bin/env bash
# Install the CongoDB MongoDB wire-protocol test server (from the npm package
# @push.rocks/smartmongo 2.2.0) into a directory, and copy start.mjs next to it.
#
# Usage: install.sh [INSTALL_DIR]     (default: <repo>/.mongo-wire)
#
# Idempotent: if INSTALL_DIR/.installed-smartmongo-<version> and the CongoDB entry module
# exist, only start.mjs is refreshed.
# Needs only node and npm. A plain `npm install @push.rocks/smartmongo@2.2.0` fails on
# a transitive dependency, so only what its congodb/ module imports is installed and the
# package tarball is unpacked by hand (9.x cannot install at all).
set -euo pipefail

SMARTMONGO_VERSION="2.2.0"
MARKER_NAME=".installed-smartmongo-${SMARTMONGO_VERSION}"
ENTRY="node_modules/@push.rocks/smartmongo/dist_ts/congodb/index.js"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="${1:-$repo/.mongo-wire}"

for tool in node npm tar; do
    command -v "$tool" >/dev/null 2>&1 || { echo "install.sh: '$tool' not found on PATH" >&2; exit 1; }
done

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

installed() { [ -f "$dir/$MARKER_NAME" ] && [ -f "$dir/$ENTRY" ]; }

if ! installed; then
    # Serialise concurrent installs into the same directory (flock is optional).
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$dir/.install.lock"
        flock 9
    fi
fi

if ! installed; then
    rm -f "$dir/$MARKER_NAME"
    echo "install.sh: installing CongoDB (@push.rocks/smartmongo@$SMARTMONGO_VERSION) into $dir" >&2
    cd "$dir"
    [ -f package.json ] || echo '{"name": "mongo-wire-test-server", "private": true}' > package.json
    npm install --no-audit --no-fund --loglevel=error \
        'bson@^6.10.0' 'mingo@^7.2.0' '@push.rocks/smartfs@^1.3.1' '@push.rocks/smartpath@^5.0.11' \
        '@push.rocks/smartpromise@^4.0.3' '@push.rocks/smartrx@^3.0.0' >&2
    tgz="$(npm pack --loglevel=error "@push.rocks/smartmongo@$SMARTMONGO_VERSION" | tail -1)"
    rm -rf node_modules/@push.rocks/smartmongo
    mkdir -p node_modules/@push.rocks/smartmongo
    tar xzf "$tgz" -C node_modules/@push.rocks/smartmongo --strip-components=1
    rm -f "$tgz"
    [ -f "$ENTRY" ] || { echo "install.sh: $ENTRY missing after unpacking" >&2; exit 1; }
    touch "$MARKER_NAME"
fi

# Always refresh the launcher so edits to start.mjs take effect without a reinstall.
cp "$here/start.mjs" "$dir/start.mjs.tmp"
mv -f "$dir/start.mjs.tmp" "$dir/start.mjs"
echo "$dir"

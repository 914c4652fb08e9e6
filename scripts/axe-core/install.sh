#!/usr/bin/env bash
# Install axe-core (the accessibility engine the console's browser tests run on every
# page) from the npm package into .axe-core/ of the repository. Needs node and npm.
set -euo pipefail
cd "$(dirname "$0")/../.."
AXE_CORE_VERSION=4.10.3
TARGET=.axe-core/node_modules/axe-core/axe.min.js
if [ -f "$TARGET" ] && grep -q "\"version\": \"$AXE_CORE_VERSION\"" \
        .axe-core/node_modules/axe-core/package.json; then
    exit 0
fi
mkdir -p .axe-core
npm install --prefix .axe-core --no-audit --no-fund --loglevel=error \
    "axe-core@$AXE_CORE_VERSION"
test -f "$TARGET"

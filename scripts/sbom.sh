#!/usr/bin/env bash
# Prints the SBOM (CycloneDX JSON) of the package's runtime dependencies: every package
# `npm install envsync` installs, each with its version, from package-lock.json. The release
# workflow attaches it to the GitHub release; test/system/sbom.test.ts checks it.
#
# Not `npm sbom --omit dev` on the checkout: that leaves out a runtime dependency that a dev
# dependency also uses (yaml and @opentelemetry/api here), since npm omits a package by the kind
# of any one edge that leads to it, a known npm bug. So `npm sbom` runs on a copy of
# package.json without its devDependencies and the lock file pruned to match, with the locked
# versions kept (`npm install --package-lock-only` installs nothing). Needs node and npm.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# npm names the SBOM's own component after the folder.
mkdir "$work/envsync"
cp "$root/package-lock.json" "$work/envsync/"
node -e '
  const manifest = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  delete manifest.devDependencies;
  process.stdout.write(JSON.stringify(manifest, null, 2));
' "$root/package.json" >"$work/envsync/package.json"
cd "$work/envsync"
npm install --package-lock-only --ignore-scripts --no-audit --no-fund >/dev/null
npm sbom --package-lock-only --sbom-format cyclonedx

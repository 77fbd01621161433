#!/usr/bin/env bash
# Sourced by the scripts that need Debian packages (setup.sh, fuzz.sh, native-memcheck.sh):
# apt_need PKG... installs those of the packages that are not installed yet (apt-get update
# first, sudo unless root) and does nothing when all are.
apt_need() {
  local missing=() p sudo=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]}"
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

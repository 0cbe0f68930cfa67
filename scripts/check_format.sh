#!/usr/bin/env bash
# The lines a change touches follow .clang-format (clang-format 14, 100 columns). Lines untouched
# since the base commit are left as they are (about 600 were longer than 100 columns when this
# check began); every line changed after it is checked.
#   bash scripts/check_format.sh [base-commit]     # default: the commit in .ci/format-base
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(cat .ci/format-base)}
if ! command -v git-clang-format >/dev/null; then
  SUDO=""; if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  echo "== installing clang-format"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-format
fi
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  # A shallow clone: check what it has (the last commit), and say so.
  if git rev-parse -q --verify HEAD~1 >/dev/null; then
    echo "check_format.sh: warning: base commit ${base:0:7} is not in this clone (shallow?); checking the last commit only" >&2
    base=HEAD~1
  else
    echo "check_format.sh: warning: no history in this clone; nothing to compare with, format not checked" >&2
    exit 0
  fi
fi
out=$(git clang-format --diff --extensions cpp,hpp,inc,h "$base" HEAD -- include src apps tests perf)
case "$out" in
  ""|"no modified files"*|"clang-format did not modify any files"*)
    echo "check_format.sh: the lines changed since ${base:0:7} follow .clang-format" ;;
  *)
    printf '%s\n' "$out"
    echo "check_format.sh: lines changed since ${base:0:7} differ from .clang-format (above);" \
         "apply with: git clang-format $base" >&2
    exit 1 ;;
esac

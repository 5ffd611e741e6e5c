#!/bin/sh
# Benchmarks/RuleLoad/build.sh OUT [SOURCE]: builds rule-load (Benchmarks/RuleLoad/main.swift)
# into OUT from the modules of the tree at SOURCE (default: this one), release flags, each
# module whole. SOURCE may be an older checkout (git worktree add --detach /tmp/x COMMIT).
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
src=${2:-$here}
mkdir -p "$out"
cd "$out"
libs=""
for m in JSONTokens AlertModel AlertPolicy AlertRules; do
  swiftc -O -wmo -swift-version 6 -parse-as-library -module-name $m -emit-module -emit-library -static -I . \
    -o lib$m.a $(find "$src/Sources/$m" -name '*.swift')
  libs="-l$m $libs"
done
swiftc -O -wmo -swift-version 6 -I . -L . $libs -lm -o rule-load "$here/Benchmarks/RuleLoad/main.swift"

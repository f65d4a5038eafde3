#!/usr/bin/env bash
# Fuzzes the frame decoder and the section scanner with Jazzer, seeded with the shared hostile corpus.
#   broker-codec/fuzz.sh [frames|sections] [seconds]     (default: both targets, 300 s each)
# The corpus is copied at run time into .cifuzz-corpus/ (git-ignored), Jazzer's working corpus; findings
# land in broker-codec/ as crash-* files: move them to
# src/test/resources/io/skiffmq/codec/amqp10/DecoderFuzzTestInputs/<target>/ to keep them as regression inputs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
corpus="${SKIFFMQ_CORPUS_DIR:-$here/../../shared/corpora/amqp10}"
targets="${1:-frames sections}"
seconds="${2:-300}"
[ -d "$corpus" ] || { echo "fuzz.sh: no corpus at $corpus (set SKIFFMQ_CORPUS_DIR)" >&2; exit 2; }

for target in $targets; do
  work="$here/.cifuzz-corpus/io.skiffmq.codec.amqp10.DecoderFuzzTest/$target"
  mkdir -p "$work"
  case "$target" in
    frames) seeds=(go-amqp-conn proton-connection-driver proton-proactor-receive) ;;
    sections) seeds=(proton-message-decode) ;;
    *) echo "fuzz.sh: unknown target $target" >&2; exit 2 ;;
  esac
  for s in "${seeds[@]}"; do
    find "$corpus/$s" -type f ! -name README.md -exec cp -n {} "$work/" \;
  done
  echo "fuzzing $target for ${seconds}s from $(ls "$work" | wc -l) inputs"
  (cd "$here/.." && JAZZER_FUZZ=1 mvn -B -q -pl broker-codec test -Dtest="DecoderFuzzTest#$target" \
      -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1="-max_total_time=$seconds" \
      -Dsurefire.failIfNoSpecifiedTests=false)
done

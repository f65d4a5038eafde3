#!/usr/bin/env bash
# Fuzzes the decoders with Jazzer.
#   broker-codec/fuzz.sh [frames|sections|frames091|streamFrames] [seconds]     (default: every target, 300 s each)
# frames and sections (AMQP 1.0) are seeded with the shared hostile corpus; frames091 (AMQP 0-9-1) with the
# inputs Amqp091HostileCorpusTest generates; streamFrames (the stream protocol) with the committed corpus in
# src/test/resources/io/skiffmq/codec/stream/corpus/. Seeds are copied at run time into .cifuzz-corpus/ (git-ignored),
# Jazzer's working corpus; findings land in broker-codec/ as crash-* files: move them to the target's
# src/test/resources/io/skiffmq/codec/<package>/<Class>Inputs/<target>/ to keep them as regression inputs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
corpus="${SKIFFMQ_CORPUS_DIR:-$here/../../shared/corpora/amqp10}"
targets="${1:-frames sections frames091 streamFrames}"
seconds="${2:-300}"

for target in $targets; do
  case "$target" in
    frames) class=io.skiffmq.codec.amqp10.DecoderFuzzTest; seeds=(go-amqp-conn proton-connection-driver proton-proactor-receive) ;;
    sections) class=io.skiffmq.codec.amqp10.DecoderFuzzTest; seeds=(proton-message-decode) ;;
    frames091) class=io.skiffmq.codec.amqp091.Amqp091FuzzTest; seeds=() ;;
    streamFrames) class=io.skiffmq.codec.stream.StreamFuzzTest; seeds=() ;;
    *) echo "fuzz.sh: unknown target $target" >&2; exit 2 ;;
  esac
  work="$here/.cifuzz-corpus/$class/$target"
  mkdir -p "$work"
  if [ "$target" = streamFrames ]; then
    cp -n "$here"/src/test/resources/io/skiffmq/codec/stream/corpus/* "$work/"
  elif [ "$target" = frames091 ]; then
    (cd "$here/.." && mvn -B -q -pl broker-codec test -Dtest=Amqp091HostileCorpusTest \
        -Dskiffmq.amqp091.corpus.out="$work" -Dsurefire.failIfNoSpecifiedTests=false)
  else
    [ -d "$corpus" ] || { echo "fuzz.sh: no corpus at $corpus (set SKIFFMQ_CORPUS_DIR)" >&2; exit 2; }
    for s in "${seeds[@]}"; do
      find "$corpus/$s" -type f ! -name README.md -exec cp -n {} "$work/" \;
    done
  fi
  echo "fuzzing $target for ${seconds}s from $(ls "$work" | wc -l) inputs"
  (cd "$here/.." && JAZZER_FUZZ=1 mvn -B -q -pl broker-codec test -Dtest="${class##*.}#$target" \
      -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1="-max_total_time=$seconds" \
      -Dsurefire.failIfNoSpecifiedTests=false)
done

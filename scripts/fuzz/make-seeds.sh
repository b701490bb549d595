#!/bin/sh
# Regenerates Fuzz/corpus/<target>/ from seed candidates (docs/protocol.md known answers, board
# and agent example files, hand-built PDUs and envelopes). Binary targets keep only candidates
# their decoder accepts (carkey-fuzz seed); text targets keep every candidate.
# Usage: scripts/fuzz/make-seeds.sh [CARKEY_FUZZ_BINARY]   (default: a plain debug build)
set -eu
cd "$(dirname "$0")/../.."
SCRATCH=${FUZZ_SCRATCH:-/tmp/scratch-fuzzsmoke}
BIN=${1:-}
if [ -z "$BIN" ]; then
    swift build --scratch-path "$SCRATCH" --product carkey-fuzz >/dev/null
    BIN="$SCRATCH/debug/carkey-fuzz"
fi
CAND=$(mktemp -d /tmp/carkey-fuzz-seeds.XXXXXX)
trap 'rm -rf "$CAND"' EXIT
python3 scripts/fuzz/seed-candidates.py "$CAND"
mkdir -p "$CAND/documents"
"$BIN" seed-documents "$CAND/documents"
for f in "$CAND/documents"/*; do
    name=$(basename "$f"); target=${name%-*}
    mkdir -p "$CAND/$target"; cp "$f" "$CAND/$target/$name"
    # Not signed documents: no MQTT envelope of them.
    case $target in dw3000-driver|record-sealer|car-session) continue ;; esac
    # The same documents as MQTT envelope bodies (commands on /cmd, lists on /revocations, config on /config/desired).
    case "$target" in
        remote-command) sel=2; type=command ;; revocation-list) sel=3; type=revocationList ;;
        signed-config) sel=4; type=config ;; *) sel=2; type=fleetKey ;;
    esac
    python3 -c 'import sys,json; sys.stdout.buffer.write(bytes([int(sys.argv[1])]) + json.dumps({"id":"0f8fad5b-d9cb-469f-a165-70867728950e","type":sys.argv[2],"body":open(sys.argv[3],"rb").read().hex()}).encode())' "$sel" "$type" "$f" > "$CAND/mqtt-inbound/doc-$name"
done
for target in $("$BIN" list | cut -f1); do
    [ -d "$CAND/$target" ] || { echo "$target: no candidates"; continue; }
    rm -rf "Fuzz/corpus/$target"; mkdir -p "Fuzz/corpus/$target"
    case "$target" in
        json|board-file|carkey-decode) cp "$CAND/$target"/* "Fuzz/corpus/$target/"; echo "$target: $(ls "Fuzz/corpus/$target" | wc -l) text seeds" ;;
        *) "$BIN" seed "$target" "Fuzz/corpus/$target" "$CAND/$target"/* ;;
    esac
    # Small: the 12 smallest accepted seeds (sealed boxes and headers accept nearly anything).
    ls -rS "Fuzz/corpus/$target" | tail -n +13 | while read -r f; do rm -f "Fuzz/corpus/$target/$f"; done
    # A target nothing was accepted by keeps a few raw candidates so the fuzzer has a start.
    [ -n "$(ls "Fuzz/corpus/$target")" ] || for f in $(ls "$CAND/$target" | head -4); do cp "$CAND/$target/$f" "Fuzz/corpus/$target/"; done
done
for target in agent-config agent-console; do
    rm -rf "Fuzz/corpus/$target"; mkdir -p "Fuzz/corpus/$target"
    cp "$CAND/$target"/* "Fuzz/corpus/$target/"
    echo "$target: $(ls "Fuzz/corpus/$target" | wc -l) text seeds"
done

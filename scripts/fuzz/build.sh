#!/bin/sh
# Builds the libFuzzer binaries (coverage + AddressSanitizer):
#   $FUZZ_SCRATCH/build/release/carkey-fuzz  every library-side target (SwiftPM, -sanitize=fuzzer,address)
#   $FUZZ_SCRATCH/agent/carkey-agent-fuzz    agent-config, agent-console: the agent's sources minus
#       main.swift compiled with Fuzz/Agent into one module by swiftc, linked against the objects
#       of the SwiftPM build above (carkey-agent is an executable module nothing can import).
set -eu
cd "$(dirname "$0")/../.."
SCRATCH=${FUZZ_SCRATCH:-/tmp/scratch-fuzz}
SAN=${FUZZ_SANITIZE:-fuzzer,address}
BUILD="$SCRATCH/build"
swift build -c release --scratch-path "$BUILD" --product carkey-fuzz -Xswiftc -sanitize="$SAN" -Xswiftc -g -Xswiftc -DCARKEY_LIBFUZZER >&2
REL="$BUILD/release"
mkdir -p "$SCRATCH/agent"
AGENT_SOURCES=$(find Sources/GatewayAgent -name '*.swift' ! -path Sources/GatewayAgent/main.swift | sort)
# carkey-fuzz does not need CommandLineKit; the agent does. Built every time (SwiftPM makes it a
# no-op when nothing changed), so a stale module never meets newer agent sources.
swift build -c release --scratch-path "$BUILD" --target CommandLineKit -Xswiftc -sanitize="$SAN" -Xswiftc -g -Xswiftc -DCARKEY_LIBFUZZER >&2
# Every system-library shim (Sources/C*/module.modulemap), found rather than listed, so a new one
# (issue 18 added CTSS2 and CPKCS11) cannot silently break this build, which CI does not run.
SYSTEM_MODULES=$(for map in Sources/C*/module.modulemap; do printf ' -I %s' "$(dirname "$map")"; done)
# The Swift modules' objects as their output-file-map.json lists them for today's sources, not
# every .o in the folder: an object of a deleted source stays in the scratch path and would be
# linked in (it did, with undefined references, after a source file was removed).
swift_objects() {
    for module in "$@"; do
        python3 -c 'import json, sys
for source, outputs in json.load(open(sys.argv[1])).items():
    if source and "object" in outputs:
        print(outputs["object"])' "$REL/$module.build/output-file-map.json"
    done
}
OBJECTS="$(swift_objects Protocol Drivers CommandLineKit FuzzTargets) $(ls "$REL"/CShims.build/*.o)"
# shellcheck disable=SC2086 # word splitting of the lists is meant
swiftc -O -g -sanitize="$SAN" -parse-as-library -module-name carkey_agent -D CARKEY_FUZZ_AGENT_MODULE \
    -I "$REL/Modules" $SYSTEM_MODULES -Xcc -fmodule-map-file="$REL/CShims.build/module.modulemap" -I Sources/CShims/include \
    $AGENT_SOURCES Fuzz/Agent/AgentFuzzTargets.swift Fuzz/AgentDriver/AgentEntry.swift $OBJECTS \
    -lssl -lcrypto -lmosquitto -lgpiod -lbluetooth -lsqlite3 \
    -o "$SCRATCH/agent/carkey-agent-fuzz" >&2
echo "$REL/carkey-fuzz"
echo "$SCRATCH/agent/carkey-agent-fuzz"

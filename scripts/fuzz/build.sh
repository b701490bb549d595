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
# carkey-fuzz does not need CommandLineKit; the agent does.
[ -n "$(ls "$REL"/CommandLineKit.build/*.o 2>/dev/null)" ] || \
    swift build -c release --scratch-path "$BUILD" --target CommandLineKit -Xswiftc -sanitize="$SAN" -Xswiftc -g -Xswiftc -DCARKEY_LIBFUZZER >&2
OBJECTS=$(ls "$REL"/Protocol.build/*.o "$REL"/Drivers.build/*.o "$REL"/CommandLineKit.build/*.o \
              "$REL"/FuzzTargets.build/*.o "$REL"/CShims.build/*.o)
# shellcheck disable=SC2086
swiftc -O -g -sanitize="$SAN" -parse-as-library -module-name carkey_agent -D CARKEY_FUZZ_AGENT_MODULE \
    -I "$REL/Modules" -I Sources/COpenSSL -I Sources/CMosquitto -I Sources/CGPIOD -I Sources/CBluetooth \
    -I Sources/CSQLite -Xcc -fmodule-map-file="$REL/CShims.build/module.modulemap" -I Sources/CShims/include \
    $AGENT_SOURCES Fuzz/Agent/AgentFuzzTargets.swift Fuzz/AgentDriver/AgentEntry.swift $OBJECTS \
    -lssl -lcrypto -lmosquitto -lgpiod -lbluetooth -lsqlite3 \
    -o "$SCRATCH/agent/carkey-agent-fuzz" >&2
echo "$REL/carkey-fuzz"
echo "$SCRATCH/agent/carkey-agent-fuzz"

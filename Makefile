# OpenCarKey Gateway: the one way in. Run as root or as a user with sudo on Debian 12.
#
#   make deps     install missing Debian packages (silent when all are present)
#   make build    debug build of everything (installs only the build's packages: deps.sh --build)
#   make run      build, then the scripted demo (scripts/demo.sh): a simulated car, an owner
#                 pairs and shares, a friend is allowed, refused and revoked; timeline printed
#   make test     deps + build + every test suite (swift test), attack suite at small budgets
#                 included; its table is printed at the end
#   make fuzz-live  every fuzz target live for FUZZ_LIVE_SECONDS (2) under libFuzzer + ASan, corpora
#                 left alone; fails on any finding or a target that does not run (CI runs it)
#   make attack   the attack suite alone (every Attack* test) at ATTACK_SCALE (10) times the
#                 budgets of make test, then the table: attack, tries, owner success, unauthorised
#                 actions, crashes (scripts/attack-table.sh)
#   make bench    release build of carkey-bench and carkey-agent, then run the benchmarks (one JSON
#                 object per line; the idle lines also measure build/static/carkey-agent if present)
#   make fleet    FLEET_CARS (200) carkey-agent processes against a 2-node ejabberd cluster for
#                 FLEET_SECONDS (180): phone sessions, remote status requests, kill -9 and restart
#                 of one broker node; prints events lost, duplicates, latency, RSS/CPU per car,
#                 broker RSS per node and the connect-storm time
#   make soak     cloud reliability suite: 50 kill -9 rounds against a real broker, summary line
#   make soak-long  the long-run test for an hour (SOAK_LONG_SECONDS): a line a minute, summary;
#                 SOAK_LONG_BUILD=release drives the release carkey-agent instead of the debug one
#   make static   statically linked release carkey-agent and carkey, and carkey-pkcs11-bridge (builds a
#                 static libmosquitto); every key vault works with them
#   make glibc    the same release objects linked against the system's glibc and libraries, in
#                 build/glibc (not shipped; make test runs the vault tests against it as well)
#   make static-aarch64  fully static, stripped carkey-agent and carkey for aarch64 in build/aarch64
#                 (cross-built with Swift 6.0 from a trixie chroot and unpacked arm64 packages
#                 cached in /var/cache; scripts/aarch64)
#   make deb      carkey-agent_VERSION_amd64.deb and _arm64.deb in build/deb (scripts/deb)
#   make release  build/release/carkey-agent-VERSION-{x86_64,aarch64}.tar.gz for the Yocto recipe
#                 (with LICENSE and THIRD-PARTY-NOTICES.txt), an SPDX SBOM beside each, the x86_64
#                 relink kit, and the SRC_URI checksum lines (scripts/release/tarball.sh)
#   make check-swift60  build and test the committed tree with Swift 6.0 in a trixie chroot
#   make clean    remove build products (.build and build/)

SHELL := /bin/bash
.DEFAULT_GOAL := build

# Use swift from PATH, or the toolchain in /opt/swift.
ifeq ($(shell command -v swift 2>/dev/null),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif

SWIFT ?= swift
# SwiftPM scratch path: the default .build (override only to keep separate build trees).
SCRATCH ?= .build
SWIFTPM := --scratch-path $(SCRATCH)

# Shared test data (testdata/ etc.) lives beside the repository; tests read it at run time.
OPENCARKEY_SHARED ?= $(abspath $(CURDIR)/../shared)
export OPENCARKEY_SHARED

.PHONY: deps deps-build build run test test-asan test-tsan fuzz fuzz-live attack bench fleet soak soak-long static glibc static-aarch64 deb release check-swift60 clean

deps:
	@scripts/deps.sh

# Building and the demo need only the libraries' headers (scripts/deps.sh --build); make test
# and the other targets install the rest through deps.
deps-build:
	@scripts/deps.sh --build

# The PKCS#11 bridge (tools/pkcs11-bridge, docs/pkcs11-bridge.md): a small dynamically linked C
# program the agent starts to load a token's module, built with the host cc beside each agent
# that needs it (the debug build's for the tests, build/static, build/glibc).
PKCS11_BRIDGE_SOURCES := $(wildcard tools/pkcs11-bridge/*)
%/carkey-pkcs11-bridge: $(PKCS11_BRIDGE_SOURCES)
	tools/pkcs11-bridge/build.sh $@ $(CC) $(shell pkg-config --cflags p11-kit-1 2>/dev/null)

build: deps-build
	$(SWIFT) build $(SWIFTPM)
	@$(MAKE) --no-print-directory $(SCRATCH)/debug/carkey-pkcs11-bridge

run: build
	@scripts/demo.sh $(SCRATCH)/debug

# Attack* tests append one JSON line per attack here (Tests/Harness/AttackReport.swift).
ATTACK_REPORT := $(abspath $(SCRATCH))/attack-report.jsonl
ATTACK_SCALE ?= 10

# The vault tests run again against the release builds (CARKEY_TEST_BINARIES:
# Tests/Harness/AgentProcess.swift): build/static, the binary that ships (it frames TPM 2.0
# commands itself and reaches a PKCS#11 module through its carkey-pkcs11-bridge), and
# build/glibc, the same objects linked against the system's libraries. A build older than the
# sources is skipped with a message (a failure under CARKEY_REQUIRE_ARTIFACTS=1, as CI runs).
# An existing build gets its bridge here without a rebuild of the agent.
RELEASE_BUILDS := $(abspath build/static) $(abspath build/glibc)
test: deps build
	rm -f $(ATTACK_REPORT)
	@for dir in $(RELEASE_BUILDS); do [[ ! -x $$dir/carkey-agent ]] || $(MAKE) --no-print-directory $$dir/carkey-pkcs11-bridge; done
	CARKEY_ATTACK_REPORT=$(ATTACK_REPORT) $(SWIFT) test $(SWIFTPM); status=$$?; \
	    scripts/attack-table.sh $(ATTACK_REPORT) || [[ $$status != 0 ]] || status=1; \
	    for dir in $(RELEASE_BUILDS); do \
	        stale=$$(find Sources Package.swift -newer $$dir/carkey-agent -print -quit 2>/dev/null); \
	        if [[ -x $$dir/carkey-agent && -x $$dir/carkey && -x $$dir/carkey-pkcs11-bridge && -z $$stale ]]; then \
	            echo "make test: the vault tests again, against $$dir"; \
	            CARKEY_TEST_BINARIES=$$dir $(SWIFT) test $(SWIFTPM) --skip-build --filter 'VaultAgentTests' || status=1; \
	        else \
	            echo "make test: no current build in $$dir$${stale:+ (older than $$stale)}: its vault pass skipped (make static glibc)" >&2; \
	            [[ $${CARKEY_REQUIRE_ARTIFACTS:-} != 1 ]] || status=1; \
	        fi; \
	    done; exit $$status

# The suite under AddressSanitizer / ThreadSanitizer, in their own scratch paths; the agent
# subprocesses the end-to-end tests start are instrumented too, and any report from any process
# fails the run (scripts/sanitize.sh says what it skips and why).
test-asan: deps
	@SCRATCH=$(SCRATCH) scripts/sanitize.sh address

test-tsan: deps
	@SCRATCH=$(SCRATCH) scripts/sanitize.sh thread

# Coverage-guided fuzzing (libFuzzer + ASan): every target for FUZZ_SECONDS, corpora kept in
# Fuzz/corpus, one line per target with execs, coverage and findings (docs/fuzzing.md).
FUZZ_SECONDS ?= 60
fuzz: deps
	@FUZZ_SCRATCH=$(abspath $(SCRATCH))/fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz/run.sh

# The live lane (.ci/run): the libFuzzer binaries built as for make fuzz, then every target for
# FUZZ_LIVE_SECONDS, its seed corpus replayed first; no merge, so the checked-in corpora stay as
# they are. A target that cannot start or any finding (crash, leak at exit, OOM, timeout) fails.
FUZZ_LIVE_SECONDS ?= 2
fuzz-live: deps
	@FUZZ_SCRATCH=$(abspath $(SCRATCH))/fuzz FUZZ_SECONDS=$(FUZZ_LIVE_SECONDS) FUZZ_MERGE=0 scripts/fuzz/run.sh

attack: deps
	$(SWIFT) build $(SWIFTPM) --build-tests
	rm -f $(ATTACK_REPORT)
	CARKEY_ATTACK_SCALE=$(ATTACK_SCALE) CARKEY_ATTACK_REPORT=$(ATTACK_REPORT) \
	    $(SWIFT) test $(SWIFTPM) --skip-build --filter '\.Attack'; status=$$?; \
	    scripts/attack-table.sh $(ATTACK_REPORT) || [[ $$status != 0 ]] || status=1; exit $$status

bench: deps
	$(SWIFT) build $(SWIFTPM) -c release --product carkey-bench
	$(SWIFT) build $(SWIFTPM) -c release --product carkey-agent   # idle and agent (the real path) run it
	$(SCRATCH)/release/carkey-bench

FLEET_CARS ?= 200
FLEET_SECONDS ?= 180
fleet: deps
	$(SWIFT) build $(SWIFTPM) --build-tests
	CARKEY_FLEET=1 CARKEY_FLEET_CARS=$(FLEET_CARS) CARKEY_FLEET_SECONDS=$(FLEET_SECONDS) \
	    $(SWIFT) test $(SWIFTPM) --skip-build --filter FleetTests

# The cloud reliability suite with more rounds than `make test` runs; prints one "soak:" line
# per test (events written, delivered, duplicates).
SOAK_ROUNDS ?= 50
soak: deps build
	CARKEY_SOAK_ROUNDS=$(SOAK_ROUNDS) $(SWIFT) test $(SWIFTPM) \
	    --filter 'CloudAgentTests|CloudLinkBrokerTests' 2>&1 | tee $(SCRATCH)/soak.log | grep -E '^(soak|broker-restart)|Executed [0-9]+ tests' ; \
	    exit $${PIPESTATUS[0]}

# The long-run test (LongRunTests: debug carkey-agent with --mqtt to a real broker, 6 phones
# doing complete sessions) for SOAK_LONG_SECONDS instead of its 20,000-session budget. Prints a
# "soak:" line a minute (RSS, fds, threads, CPU, DB size, outbox depth, events delivered) and a
# "long-run:" summary; exits non-zero when a check fails (RSS growth, CPU per session, fds or
# threads at rest, an event not delivered, exit status on SIGTERM).
# It runs the test bundle directly: `swift test` holds a test's output until the test ends.
SOAK_LONG_SECONDS ?= 3600
# Which agent the long run drives: debug (the test build's) or release (built here).
SOAK_LONG_BUILD ?= debug
soak-long: deps
	$(SWIFT) build $(SWIFTPM) --build-tests
	[[ $(SOAK_LONG_BUILD) == debug ]] || $(SWIFT) build $(SWIFTPM) -c $(SOAK_LONG_BUILD) --product carkey-agent
	CARKEY_LONGRUN_SECONDS=$(SOAK_LONG_SECONDS) CARKEY_LONGRUN_AGENT=$(abspath $(SCRATCH))/$(SOAK_LONG_BUILD)/carkey-agent \
	    $(SCRATCH)/debug/OpenCarKeyPackageTests.xctest \
	    CarKeyToolTests.LongRunTests 2>&1 | tee $(SCRATCH)/soak-long-$(SOAK_LONG_BUILD).log | grep --line-buffered -E '^(soak|long-run):|error:|Executed [0-9]+ tests?' ; \
	    exit $${PIPESTATUS[0]}

static: deps
	@SCRATCH=$(SCRATCH) scripts/build-static.sh
	@$(MAKE) --no-print-directory build/static/carkey-pkcs11-bridge

glibc: static
	@SCRATCH=$(SCRATCH) scripts/build-glibc.sh
	@$(MAKE) --no-print-directory build/glibc/carkey-pkcs11-bridge

static-aarch64: deps
	@scripts/aarch64/build.sh

deb: static static-aarch64
	@scripts/deb/build.sh

release: static static-aarch64
	@scripts/release/tarball.sh

check-swift60:
	scripts/check-swift60.sh

clean:
	rm -rf $(SCRATCH) build

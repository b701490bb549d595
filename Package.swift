// swift-tools-version:6.0
// OpenCarKey Gateway: the car side of a phone-as-car-key system.
// No outside Swift packages: everything below is this repository or a Debian system library.
import PackageDescription

let package = Package(
    name: "OpenCarKey",
    products: [
        .executable(name: "carkey-agent", targets: ["carkey-agent"]),
        .executable(name: "carkey", targets: ["carkey"]),
        .library(name: "Protocol", targets: ["Protocol"]),
        .library(name: "Drivers", targets: ["Drivers"]),
    ],
    targets: [
        // System libraries (module maps under Sources/C*).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto",
                       providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod",
                       providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez",
                       providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // Headers only (no link): the PKCS#11 key vault loads its module at run time
        // (Sources/Drivers/SecureKeys/PKCS11). The TPM 2.0 vault speaks the TPM's own protocol
        // (Sources/Drivers/SecureKeys/TPM2) and needs no library.
        .systemLibrary(name: "CPKCS11", path: "Sources/CPKCS11", providers: [.apt(["libp11-kit-dev"])]),
        // Static-inline C helpers for macros and variadic calls Swift cannot import.
        .target(name: "CShims", dependencies: ["COpenSSL", "CSQLite"]),

        // Pure, deterministic protocol code (sans-IO).
        .target(name: "Protocol", dependencies: ["COpenSSL", "CShims"]),
        // Device and service backends, each with a simulated twin.
        .target(name: "Drivers",
                dependencies: ["Protocol", "CShims", "CMosquitto", "CGPIOD", "CBluetooth", "CSQLite", "CPKCS11", "COpenSSL"]),

        // Shared argument parsing and subcommand dispatch for the executables.
        .target(name: "CommandLineKit"),

        // The daemon that runs on the board.
        .executableTarget(name: "carkey-agent", dependencies: ["Protocol", "Drivers", "CommandLineKit"],
                          path: "Sources/GatewayAgent"),
        // Command-line tool for owners, fleet back ends and field engineers.
        .executableTarget(name: "carkey", dependencies: ["Protocol", "Drivers", "CommandLineKit"],
                          path: "Sources/CarKeyTool"),
        // Benchmarks: a direct-EVP reference in C and the Swift runner (make bench).
        .target(name: "CBenchReference", dependencies: ["COpenSSL"], path: "Benchmarks/CBenchReference"),
        .executableTarget(name: "carkey-bench", dependencies: ["Protocol", "Drivers", "CBenchReference", "TestHarness"],
                          path: "Benchmarks/carkey-bench"),

        // Real services for tests and benchmarks (a mosquitto broker on loopback).
        // (Protocol and Drivers for the phone load generator and the event-counting subscriber.)
        .target(name: "TestHarness", dependencies: ["Protocol", "Drivers"], path: "Tests/Harness"),
        // (TestHarness for the seed's range filter, the baseline the proximity tests compare with.)
        .testTarget(name: "ProtocolTests", dependencies: ["Protocol", "TestHarness"]),
        // Writer the storage crash test SIGKILLs mid-transaction.
        .executableTarget(name: "carkey-storage-crasher", dependencies: ["Drivers", "Protocol"], path: "Tests/Helpers/StorageCrasher"),
        .testTarget(name: "DriversTests", dependencies: ["Drivers", "Protocol", "TestHarness", "carkey-storage-crasher"]),
        .testTarget(name: "CommandLineKitTests", dependencies: ["CommandLineKit"]),
        // Fuzzing (docs/fuzzing.md): property functions per parser, the libFuzzer executable
        // (scripts/fuzz/run.sh builds it with -sanitize=fuzzer), and the seed-corpus smoke.
        .target(name: "FuzzTargets", dependencies: ["Protocol", "Drivers"], path: "Fuzz/Targets"),
        .executableTarget(name: "carkey-fuzz", dependencies: ["FuzzTargets"], path: "Fuzz/Driver"),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "Protocol"]),
        // The agent's parts in process (@testable import carkey_agent): config, console, GPIO actuation.
        .testTarget(name: "GatewayAgentTests", dependencies: ["carkey-agent", "Drivers", "Protocol", "CommandLineKit", "TestHarness", "FuzzTargets"]),
        // End-to-end: runs the built executables as subprocesses.
        // (Drivers and Protocol to read the agent's store and speak raw protocol to it.)
        .testTarget(name: "CarKeyToolTests", dependencies: ["carkey", "carkey-agent", "Drivers", "Protocol", "TestHarness"]),
    ],
    swiftLanguageModes: [.v6]
)

// Handshake latency and sessions/s with the car identity in each key vault (issue 18): the file
// vault's software key (the reference, measured in the same run), a TPM 2.0 (swtpm) and a
// PKCS#11 token (SoftHSM2). Rounds interleave the providers so drift hits all of them; each
// line gives min/median over handshakes and rounds, the ratio of the round's median visit to
// the file provider's, and the raw device signature time. Wall clock: the TPM signs in another
// process, so the thread CPU clock the other benchmarks use would not see it.
//
// A handshake costs exactly one identity-key operation: the Challenge signature
// (CarEngine+Handshake.swift, handleHello). The AuthResponse's ECDH uses the two ephemeral
// keys, and commands use the session keys. (Pairing signs once more; the advertising-key grant
// does one static ECDH with the identity.) So a device adds one signature to each handshake,
// and the model lines below add 30/100/300 ms, a discrete TPM's range, to the software path.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol
import TestHarness

enum VaultBench {
    /// A discrete TPM's ECDSA P-256 signature, in milliseconds (tens to hundreds).
    static let modelSignMillis: [Double] = [30, 100, 300]
    /// The Challenge's signed input is 208 bytes (HandshakeBench's 17-character vehicle ID).
    static let signedInput = Bytes(repeating: 0xa5, count: 208)

    static func run(rounds: Int = 15, handshakesPerRound: Int = 100, signsPerRound: Int = 30) throws {
        var providers: [VaultBenchProvider] = []
        defer { providers.reversed().forEach { $0.tearDown() } }
        providers.append(try VaultBenchProvider.file())
        for (name, make) in [("tpm2", VaultBenchProvider.tpm2), ("pkcs11", VaultBenchProvider.pkcs11)] {
            do {
                providers.append(try make())
            } catch let skip as VaultSkip {
                emitSkip(name, skip.description)
            } catch let error as SecureKeyError {
                // The device or module missing (no swtpm, no SoftHSM2) is a skip; any other device error
                // on a present device fails the benchmark.
                guard case .deviceMissing = error else { throw error }
                emitSkip(name, error.description)
            }
        }
        // First use (loading keys, the module's first session, swtpm's first command) is not
        // what a waiting phone sees on a running car.
        for provider in providers { try provider.warmUp() }

        for _ in 0..<rounds {
            for provider in providers {
                try provider.measureRound(handshakes: handshakesPerRound, signs: signsPerRound)
            }
            let reference = providers[0].lastRoundMedianMillis
            for provider in providers { provider.ratios.append(provider.lastRoundMedianMillis / reference) }
        }

        let file = providers[0]
        let softwareHandshake = file.roundMedians.median
        let softwareSign = Bench.median(file.signMillis)
        for provider in providers {
            let sign = Bench.median(provider.signMillis)
            Bench.emit([
                ("benchmark", "vault_handshake"),
                ("provider", provider.name),
                ("path", provider.path),
                ("clock", "wall (car engine calls only; phone untimed); car_cpu_us on the thread CPU clock"),
                ("latency_ms_min", provider.visitMillis.min() ?? 0),
                ("latency_ms_median", Bench.median(provider.visitMillis)),
                // Per round: the median visit (robust to this shared machine's preemptions,
                // which only the wall clock sees) and the mean visit (what the round took).
                ("round_median_ms_min", provider.roundMedians.min),
                ("round_median_ms_median", provider.roundMedians.median),
                ("round_mean_ms_median", provider.roundMeans.median),
                // One engine, one thread, one device: visits are serial.
                ("sessions_per_sec", 1000 / provider.roundMedians.median),
                ("sessions_per_sec_of_mean", 1000 / provider.roundMeans.median),
                ("ratio_to_file", provider.ratios.median),
                ("ratio_to_file_min", provider.ratios.min),
                ("sign_ms_min", provider.signMillis.min() ?? 0),
                ("sign_ms_median", sign),
                // The model's prediction for this device: the file path with this sign instead.
                ("latency_ms_model", softwareHandshake - softwareSign + sign),
                ("car_cpu_us_median", provider.cpuMicros.median),
                ("identity_operations_per_handshake", provider.identityOperations / provider.visits),
                ("rounds", rounds),
                ("handshakes_per_round", handshakesPerRound),
                ("signs_per_round", signsPerRound),
            ])
        }
        for deviceSign in modelSignMillis {
            let latency = softwareHandshake - softwareSign + deviceSign
            Bench.emit([
                ("benchmark", "vault_model"),
                ("path", "model: discrete TPM, one identity signature per handshake (the Challenge); "
                    + "file-provider handshake measured here, its software sign replaced by the device's"),
                ("device_sign_ms", deviceSign),
                ("software_handshake_ms", softwareHandshake),
                ("software_sign_ms", softwareSign),
                ("handshake_latency_ms", latency),
                ("ratio_to_file", latency / softwareHandshake),
                // A TPM runs one command at a time and the agent's loop is single-threaded.
                ("sessions_per_sec_max", 1000 / latency),
            ])
        }
    }

    private static func emitSkip(_ provider: String, _ reason: String) {
        Bench.emit([("benchmark", "vault_handshake"), ("provider", provider), ("skipped", true), ("reason", reason)])
    }
}

/// One car identity under test, its device (if any), and its figures.
final class VaultBenchProvider {
    let name: String
    let path: String
    private let identity: CountedIdentity
    private var runner: VaultHandshakeRunner
    private let cleanUp: () -> Void
    private var cleaned = false

    /// Car-side wall milliseconds of every measured visit.
    private(set) var visitMillis: [Double] = []
    /// Wall milliseconds of every measured raw signature.
    private(set) var signMillis: [Double] = []
    /// Per round: median and mean visit milliseconds, car thread-CPU microseconds per visit,
    /// ratio of the median visit to the file provider's.
    var roundMedians = RoundFigures(), roundMeans = RoundFigures(), cpuMicros = RoundFigures(), ratios = RoundFigures()
    private(set) var lastRoundMedianMillis = 0.0
    /// Identity operations counted during measured visits, and the visits.
    private(set) var identityOperations = 0, visits = 0

    init(name: String, path: String, identity: any ProtocolKeyAgreement, cleanUp: @escaping () -> Void) throws {
        self.name = name
        self.path = path
        self.identity = CountedIdentity(identity)
        self.cleanUp = cleanUp
        runner = try VaultHandshakeRunner(identity: self.identity)
    }

    func tearDown() {
        guard !cleaned else { return }
        cleaned = true
        cleanUp()
    }

    func warmUp() throws {
        for _ in 0..<3 { _ = try runner.visit() }
        for _ in 0..<3 { _ = try identity.signature(for: VaultBench.signedInput) }
    }

    func measureRound(handshakes: Int, signs: Int) throws {
        var wall: UInt64 = 0, cpu: UInt64 = 0
        var round: [Double] = []
        let before = identity.operations
        for _ in 0..<handshakes {
            let visit = try runner.visit()
            wall += visit.wallNanos
            cpu += visit.cpuNanos
            round.append(Double(visit.wallNanos) / 1e6)
        }
        identityOperations += identity.operations - before
        visits += handshakes
        visitMillis += round
        lastRoundMedianMillis = Bench.median(round)
        roundMedians.append(lastRoundMedianMillis)
        roundMeans.append(Double(wall) / 1e6 / Double(handshakes))
        cpuMicros.append(Double(cpu) / 1e3 / Double(handshakes))
        for _ in 0..<signs {
            let start = Bench.now()
            let signature = try identity.signature(for: VaultBench.signedInput)
            signMillis.append(Double(Bench.now() - start) / 1e6)
            // Thrown, not a precondition: the caller's defer must still stop swtpm.
            guard identity.publicKey.isValidSignature(signature, for: VaultBench.signedInput) else {
                throw VaultHandshakeRunner.Failed(description: "\(name): the device's signature does not verify")
            }
        }
    }

    /// (a) The file vault's path: the identity is a software P256PrivateKey in the agent's memory.
    static func file() throws -> VaultBenchProvider {
        try VaultBenchProvider(name: "file", path: "software P256PrivateKey in process (the file vault: identity unsealed from the store)",
                               identity: try P256PrivateKey.generate(), cleanUp: {})
    }

    /// (b) TPM2KeyVault on a swtpm over loopback TCP (a simulator: no bus, no slow silicon).
    static func tpm2() throws -> VaultBenchProvider {
        let tpm = try BenchSoftwareTPM()
        let state = TestFolders.make(prefix: "opencarkey-bench-tpm2-state")
        do {
            let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state)
            do {
                guard let identity = try vault.deviceIdentity(create: true) else { throw VaultHandshakeRunner.Failed(description: "the TPM vault made no identity") }
                return try VaultBenchProvider(name: "tpm2", path: "TPM2KeyVault, swtpm over loopback TCP (TPM2_Sign in the simulator process)",
                                              identity: identity, cleanUp: { vault.close(); tpm.stop(); TestFolders.remove(state) })
            } catch {
                vault.close()
                throw error
            }
        } catch {
            tpm.stop()
            TestFolders.remove(state)
            throw error
        }
    }

    /// (c) PKCS11KeyVault on a fresh SoftHSM2 token (the module's C_Sign runs in this process).
    static func pkcs11() throws -> VaultBenchProvider {
        let token = try BenchSoftHSMToken()
        let state = TestFolders.make(prefix: "opencarkey-bench-pkcs11-state")
        do {
            let vault = try PKCS11KeyVault(modulePath: BenchSoftHSMToken.modulePath, tokenLabel: token.label,
                                           pin: token.pin, stateDirectory: state)
            do {
                guard let identity = try vault.deviceIdentity(create: true) else { throw VaultHandshakeRunner.Failed(description: "the PKCS#11 vault made no identity") }
                return try VaultBenchProvider(name: "pkcs11", path: "PKCS11KeyVault, SoftHSM2 token (C_Sign in the module, in process)",
                                              identity: identity, cleanUp: { vault.close(); token.remove(); TestFolders.remove(state) })
            } catch {
                vault.close()
                throw error
            }
        } catch {
            token.remove()
            TestFolders.remove(state)
            throw error
        }
    }
}

/// Counts identity operations the engine asks for (signatures and ECDH), so the output says
/// how many a handshake really does rather than what the comments claim.
final class CountedIdentity: ProtocolKeyAgreement, @unchecked Sendable {
    // @unchecked Sendable: used from the benchmark's one thread only.
    private let wrapped: any ProtocolKeyAgreement
    private(set) var operations = 0

    init(_ wrapped: any ProtocolKeyAgreement) { self.wrapped = wrapped }

    var publicKey: P256PublicKey { wrapped.publicKey }

    func signature(for message: Bytes) throws -> ECDSASignature {
        operations += 1
        return try wrapped.signature(for: message)
    }

    func sharedSecret(with peer: P256PublicKey) throws -> Bytes {
        operations += 1
        return try wrapped.sharedSecret(with: peer)
    }
}

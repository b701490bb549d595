// The native client against a real TPM (swtpm) when the bytes on the bus are changed: a command
// whose session HMAC has one bit flipped is refused by the TPM (TPM_RC_AUTH_FAIL/BAD_AUTH) and
// nothing is made or written; a response whose HMAC has one bit flipped is refused by us and
// its contents (the unsealed storage key) are not used.
#if canImport(Glibc)
import Glibc
#endif
@testable import Drivers
import Protocol
import TestHarness
import XCTest

/// Wraps the real transport and changes one command or response of a given command code.
final class TamperingTransport: TPM2Transport {
    private let inner: any TPM2Transport
    var commandCode: UInt32?
    var flipCommandByte: Int?
    var flipResponseFromEnd: Int?
    private(set) var tampered = 0

    init(_ inner: any TPM2Transport) { self.inner = inner }

    func exchange(_ command: Bytes) throws(TPM2TransportError) -> Bytes {
        var command = command
        let code = command.count >= 10 ? UInt32(command[6]) << 24 | UInt32(command[7]) << 16 | UInt32(command[8]) << 8 | UInt32(command[9]) : 0
        let matches = code == commandCode
        if matches, let index = flipCommandByte { command[index] ^= 0x01; tampered += 1 }
        var response = try inner.exchange(command)
        if matches, let back = flipResponseFromEnd { response[response.count - back] ^= 0x01; tampered += 1 }
        return response
    }

    func close() { inner.close() }
}

final class TPM2ClientTests: TPM2SwtpmTestCase {
    /// A vault whose connection goes through a TamperingTransport (returned for the test to arm).
    private func open(_ tpm: TPM2SoftwareTPM, _ state: String) throws -> (TPM2KeyVault, () -> TamperingTransport?) {
        final class Holder { var transport: TamperingTransport? }
        let holder = Holder()
        let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state, pcrs: [], makeDAProtected: false) { tcti in
            let made = TamperingTransport(try tcti.open())
            holder.transport = made
            return made
        }
        return (vault, { holder.transport })
    }

    func testACommandWithAFlippedHMACBitIsRefusedByTheTPMAndNothingIsWritten() throws {
        let tpm = try startTPM()
        let state = folder()
        let (vault, transport) = try open(tpm, state)
        defer { vault.close() }
        let wire = try XCTUnwrap(transport())
        // TPM2_Create under the salted session: header 10, parent handle 4, authorizationSize 4,
        // session handle 4, nonce 2 + 32, attributes 1, HMAC size 2: the HMAC starts at byte 59.
        wire.commandCode = TPM2CommandCode.create
        wire.flipCommandByte = 59 + 7
        do {
            _ = try vault.storageKey()
            XCTFail("a command with a wrong HMAC was accepted")
        } catch let error as SecureKeyError {
            guard case .operationFailed(_, let code, let detail) = error,
                  let number = TPM2Code.format1Error(UInt32(code)) else { return XCTFail("\(error)") }
            XCTAssertTrue([TPM2Code.authFail, TPM2Code.badAuth].contains(number), "\(detail)")
            print("tpm2: flipped command HMAC bit: \(error)")
        }
        XCTAssertEqual(wire.tampered, 1)
        XCTAssertEqual(access(state + "/tpm2-storage.priv", F_OK), -1, "nothing sealed, nothing written")
        XCTAssertEqual(access(state + "/tpm2-storage.pub", F_OK), -1)
        XCTAssertEqual(try vault.lockoutCounter(), 0, "the noDA primary's failed authorisation counts nothing")
        // The vault itself is unharmed: the next (untampered) session seals.
        wire.commandCode = nil
        XCTAssertEqual(try vault.storageKey().count, 32)
    }

    func testAResponseWithAFlippedHMACBitIsRefusedAndItsContentUnused() throws {
        let tpm = try startTPM()
        let state = folder()
        var (vault, transport) = try open(tpm, state)
        let key = try vault.storageKey()
        vault.close()
        let blobs = try Files.read(state + "/tpm2-storage.priv")
        (vault, transport) = try open(tpm, state)
        defer { vault.close() }
        let wire = try XCTUnwrap(transport())
        // The last byte of TPM2_Unseal's response is the end of the session's HMAC.
        wire.commandCode = TPM2CommandCode.unseal
        wire.flipResponseFromEnd = 1
        do {
            let unsealed = try vault.storageKey()
            XCTFail("a response with a wrong HMAC was used (\(unsealed == key ? "the key" : "other bytes") returned)")
        } catch let error as SecureKeyError {
            XCTAssertTrue("\(error)".contains("the response HMAC did not verify"), "\(error)")
        }
        XCTAssertEqual(wire.tampered, 1)
        XCTAssertEqual(try Files.read(state + "/tpm2-storage.priv"), blobs, "the sealed key is left as it was")
        wire.commandCode = nil
        XCTAssertEqual(try vault.storageKey(), key)
    }

    /// Figures, not a bound: sign (ECDSA-SHA256, password auth) and storage-key unseal (blob
    /// files read, TPM2_Load, salted AES-CFB session, TPM2_Unseal, two flushes) on swtpm.
    func testSignAndUnsealTimesArePrinted() throws {
        let tpm = try startTPM()
        let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: folder())
        defer { vault.close() }
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        _ = try vault.storageKey()
        func time(_ runs: Int, _ body: () throws -> Void) rethrows -> String {
            var millis: [Double] = []
            for _ in 0..<runs {
                let start = Monotonic.seconds()
                try body()
                millis.append((Monotonic.seconds() - start) * 1000)
            }
            millis.sort()
            let fmt = { (value: Double) in String(Int((value * 1000).rounded())) + " us" }
            return "min \(fmt(millis[0])), median \(fmt(millis[runs / 2])) (\(runs) runs)"
        }
        let message = Bytes(repeating: 0xA5, count: 208)
        let sign = try time(200) { _ = try identity.signature(for: message) }
        let unseal = try time(50) { _ = try vault.storageKey() }
        print("tpm2: native client on swtpm: sign \(sign); unseal \(unseal)")
    }
}

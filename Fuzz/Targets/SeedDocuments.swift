// Seeds for the signed cloud documents (remote command, signed config, revocation list, fleet
// key grant), which no document shows as hex: issued here with a throwaway key. Written by
// `carkey-fuzz seed-documents OUTDIR` (scripts/fuzz/make-seeds.sh); signatures differ per run.
// Also the inputs no hex block can give: a recorded DW3000 bring-up, store rows sealed by the
// store's own RecordSealer (nonces differ per run too) and car-session step sequences.
import Drivers
import Protocol

public enum SeedDocuments {
    public static func generate() -> [String: [Bytes]] {
        guard let signer = try? P256PrivateKey.generate(), let vehicle = try? VehicleID("FUZZ-VEHICLE-1") else { return [:] }
        var out: [String: [Bytes]] = [:]
        let id = Bytes(0..<16)
        for action in [RemoteAction.lock, .unlock, .status] {
            if let c = try? RemoteCommand.issue(by: signer, commandID: id, vehicleID: vehicle, action: action, issuedAt: 1_700_000_000) {
                out["remote-command", default: []].append(c.encoded())
            }
        }
        for payload in [Bytes("{\"logLevel\":\"info\"}".utf8), []] {
            if let c = try? SignedConfig.issue(by: signer, vehicleID: vehicle, version: 2, issuedAt: 1_700_000_000,
                                               expiresAt: 1_700_086_400, payload: payload) {
                out["signed-config", default: []].append(c.encoded())
            }
        }
        let revocation = try? Revocation.issue(by: signer, vehicleID: vehicle, target: .key(KeyID(publicKey: signer.publicKey)), issuedAt: 1_700_000_000)
        for list in [[], revocation.map { [$0] } ?? []] {
            if let l = try? RevocationList.issue(by: signer, vehicleID: vehicle, listVersion: 3, issuedAt: 1_700_000_000, revocations: list) {
                out["revocation-list", default: []].append(l.encoded())
            }
        }
        if let g = try? FleetKeyGrant.issue(by: signer, vehicleID: vehicle, fleetKey: signer.publicKey, issuedAt: 1_700_000_000) {
            out["fleet-key-grant", default: []].append(g.encoded())
        }
        out["dw3000-driver"] = [recordedBringUp()]
        out["record-sealer"] = StoreTargets.seeds()
        out["car-session"] = CarSessionTargets.seeds()
        return out
    }

    /// The bytes a simulated DW3110 answers during bring-up, in order: a fuzz input that
    /// replays a healthy chip (FuzzedSPI hands out input bytes the same way).
    static func recordedBringUp() -> Bytes {
        let air = SimulatedUWBAir(seed: 1)
        let chip = air.addChip(name: "car")
        let recorder = RecordingSPI(chip)
        guard let driver = try? DW3000Driver(spi: recorder, delay: air.delay()) else { return [] }
        _ = try? driver.bringUp()
        _ = try? driver.serviceInterrupt()
        return recorder.answers
    }
}

final class RecordingSPI: SPIDevice {
    let inner: any SPIDevice
    var answers: Bytes = []
    init(_ inner: any SPIDevice) { self.inner = inner }
    func transfer(write: [UInt8], readCount: Int) throws(SPIError) -> [UInt8] {
        let out = try inner.transfer(write: write, readCount: readCount)
        answers += out
        return out
    }
    func setClock(hertz: UInt32) throws(SPIError) { try inner.setClock(hertz: hertz) }
    var clockHertz: UInt32 { inner.clockHertz }
}

// The simulation bootstrap for the key directory: `--simulate-owner PUBHEX` enrolls owner keys
// with every permission, in memory only. Issue #4 replaces this with the persistent,
// pairing-enrolled directory; the agent only sees `any KeyDirectory`, so the swap is one line
// in RunCommand.
import Protocol

enum SimulatedOwnerKeys {
    static func directory(_ owners: [P256PublicKey]) -> any KeyDirectory {
        InMemoryKeyDirectory(owners.map { KeyRecord(publicKey: $0, role: .owner, permissions: .all) })
    }
}

// The TPM's two key derivation functions, SHA-256 only (the vault's sessions and keys use no
// other hash): KDFa (Part 1 §11.4.10.2, SP 800-108 counter mode with HMAC) derives session
// keys and parameter-encryption keys; KDFe (Part 1 §11.4.10.3, SP 800-56A concatenation KDF)
// turns an ECDH secret into a session salt.
import Protocol

enum TPM2KDF {
    /// KDFa(SHA-256, key, label, contextU, contextV, bits): K(i) = HMAC(key, [i]32 || label ||
    /// 0x00 || contextU || contextV || [bits]32), concatenated and cut to bits/8 bytes.
    /// The label's terminating zero is part of the input (Part 1 §11.4.10.2: "Label ... a
    /// NULL-terminated string").
    static func kdfa(key: Bytes, label: String, contextU: Bytes, contextV: Bytes, bits: Int) -> Bytes {
        counterMode(bits: bits) { counter in
            var writer = TPM2Writer()
            writer.u32(counter)
            writer.raw(Bytes(label.utf8) + [0])
            writer.raw(contextU)
            writer.raw(contextV)
            writer.u32(UInt32(bits))
            return HMACSHA256.authenticationCode(key: key, message: writer.bytes)
        }
    }

    /// KDFe(SHA-256, Z, use, partyU, partyV, bits): K(i) = SHA-256([i]32 || Z || use || 0x00 ||
    /// partyU || partyV), cut to bits/8 bytes. For a salt: use "SECRET", partyU the ephemeral
    /// key's x, partyV the TPM key's x (Part 1 §C.6.1, "ECC Secret Sharing").
    static func kdfe(z: Bytes, use: String, partyU: Bytes, partyV: Bytes, bits: Int) -> Bytes {
        counterMode(bits: bits) { counter in
            var writer = TPM2Writer()
            writer.u32(counter)
            writer.raw(z)
            writer.raw(Bytes(use.utf8) + [0])
            writer.raw(partyU)
            writer.raw(partyV)
            defer { writer.wipe() }
            return SHA256.hash(writer.bytes)
        }
    }

    /// Both KDFs' outer loop: blocks for counter 1, 2, ... concatenated and cut to bits/8 bytes;
    /// the blocks past the cut are wiped.
    private static func counterMode(bits: Int, _ block: (UInt32) -> Bytes) -> Bytes {
        precondition(bits > 0 && bits % 8 == 0)
        var output: Bytes = []
        var counter: UInt32 = 1
        while output.count < bits / 8 {
            output += block(counter)
            counter += 1
        }
        let result = Bytes(output.prefix(bits / 8))
        ConstantTime.wipe(&output)
        return result
    }
}

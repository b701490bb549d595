// More client certificates from a test CA: one per car, CN = vehicle ID (ejabberd accepts a
// certificate only when its CN equals the client id; mosquitto with use_identity_as_username
// takes the CN as the user name). Works for any TestPKI (the CA key sits beside ca.crt).
#if canImport(Glibc)
import Glibc
#endif

extension TestPKI {
    /// The folder holding ca.crt and ca.key.
    var folder: String { String(caFile[..<caFile.lastIndex(of: "/")!]) }

    /// A client certificate and key (mode 0600) signed by this CA with subject CN=`commonName`;
    /// made once per name and reused.
    public func clientCertificate(commonName: String) throws -> (certificate: String, key: String) {
        let safe = String(commonName.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" })
        let base = folder + "/client-" + safe
        let certificate = base + ".crt", key = base + ".key"
        if access(certificate, R_OK) == 0 && access(key, R_OK) == 0 { return (certificate, key) }
        let ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        let steps = [
            "openssl req \(ec) -keyout '\(key)' -out '\(base).csr' -subj '/CN=\(commonName)'",
            "openssl x509 -req -in '\(base).csr' -CA '\(caFile)' -CAkey '\(folder)/ca.key' -CAcreateserial -days 2 -out '\(certificate)'",
            "chmod 600 '\(key)'",
        ]
        for step in steps where system(step + " >/dev/null 2>&1") != 0 { throw Failure(step: step) }
        return (certificate, key)
    }
}

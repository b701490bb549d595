// A throw-away CA with a server and a client certificate (P-256), made with the openssl CLI,
// for TLS tests against the real broker.
#if canImport(Glibc)
import Glibc
#endif

public struct TestPKI {
    public let caFile: String
    public let serverCertificate: String
    public let serverKey: String
    public let clientCertificate: String
    public let clientKey: String

    public struct Failure: Error { public let step: String }

    public init(folder: String, serverName: String, clientName: String) throws {
        mkdir(folder, 0o700)
        caFile = folder + "/ca.crt"
        serverCertificate = folder + "/server.crt"
        serverKey = folder + "/server.key"
        clientCertificate = folder + "/client.crt"
        clientKey = folder + "/client.key"
        let ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        let steps = [
            "openssl req -x509 \(ec) -keyout \(folder)/ca.key -out \(caFile) -days 2 -subj /CN=opencarkey-test-ca",
            "openssl req \(ec) -keyout \(serverKey) -out \(folder)/server.csr -subj /CN=\(serverName)",
            "printf 'subjectAltName=IP:\(serverName)\\n' > \(folder)/server.ext",
            "openssl x509 -req -in \(folder)/server.csr -CA \(caFile) -CAkey \(folder)/ca.key -CAcreateserial -days 2 -extfile \(folder)/server.ext -out \(serverCertificate)",
            "openssl req \(ec) -keyout \(clientKey) -out \(folder)/client.csr -subj /CN=\(clientName)",
            "openssl x509 -req -in \(folder)/client.csr -CA \(caFile) -CAkey \(folder)/ca.key -CAcreateserial -days 2 -out \(clientCertificate)",
            "chmod 600 \(folder)/*.key",
        ]
        for step in steps where system(step + " >/dev/null 2>&1") != 0 { throw Failure(step: step) }
    }
}

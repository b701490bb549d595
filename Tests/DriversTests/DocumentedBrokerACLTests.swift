// docs/cloud.md's mosquitto ACL, as printed, on a real broker: the file is cut out of the
// document and given to mosquitto with the documented TLS identity settings; the topics come
// from the document's Topics table. A car writes each of its car -> cloud topics and the back
// end reads them; the back end writes each cloud -> car topic and the car reads it.
import Foundation
import XCTest
import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class DocumentedBrokerACLTests: XCTestCase {
    func testTheDocumentedMosquittoACLLetsCarAndBackEndUseEveryTopic() throws {
        let doc = CloudDocument.text
        let acl = try XCTUnwrap(CloudDocument.block(startingWith: "# /etc/mosquitto/acl", in: doc), "no ACL example in docs/cloud.md")
        let topics = CloudDocument.topics(in: doc)
        let outbound = topics.filter { $0.direction == "car → cloud" }.map(\.topic)
        let inbound = topics.filter { $0.direction == "cloud → car" }.map(\.topic)
        XCTAssertEqual(outbound.count + inbound.count, topics.count, "every topic has a direction")
        XCTAssertGreaterThanOrEqual(outbound.count, 7)
        XCTAssertGreaterThanOrEqual(inbound.count, 5)

        let broker = try MosquittoBroker(aclRules: acl, tls: true)
        try broker.start()
        let pki = try XCTUnwrap(broker.pki)
        let endpoint = try MQTTEndpoint(url: broker.url)
        func client(_ id: String, certificate: String, key: String) throws -> TestBrokerClient {
            try TestBrokerClient(options: MQTTConnectOptions(endpoint: endpoint, clientID: id, sessionExpirySeconds: 0,
                                                             tls: MQTTTLSFiles(caFile: pki.caFile, certificateFile: certificate, keyFile: key)))
        }
        let vehicle = "OCK-SIM-0001"  // the broker's client certificate's CN
        let car = try client(vehicle, certificate: pki.clientCertificate, key: pki.clientKey)
        let backendIdentity = try pki.clientCertificate(commonName: "fleet-backend")
        let backend = try client("fleet-backend", certificate: backendIdentity.certificate, key: backendIdentity.key)
        let other = try pki.clientCertificate(commonName: "OCK-SIM-0002")
        let otherCar = try client("OCK-SIM-0002", certificate: other.certificate, key: other.key)

        for topic in outbound { try backend.subscribe(topic.replacingOccurrences(of: "{id}", with: "+"), qos: .atLeastOnce) }
        for topic in inbound { try car.subscribe(topic.replacingOccurrences(of: "{id}", with: vehicle), qos: .atLeastOnce) }

        for topic in outbound.map({ $0.replacingOccurrences(of: "{id}", with: vehicle) }) {
            let code = try car.publish(topic, "from the car", qos: .atLeastOnce)
            XCTAssertEqual(code.map { $0 < 0x80 }, true, "the car may write \(topic): \(String(describing: code))")
            XCTAssertTrue(backend.wait(seconds: 5) { backend.payloads(on: topic).contains("from the car") }, "the back end reads \(topic)")
        }
        for topic in inbound.map({ $0.replacingOccurrences(of: "{id}", with: vehicle) }) {
            let code = try backend.publish(topic, "from the back end", qos: .atLeastOnce)
            XCTAssertEqual(code.map { $0 < 0x80 }, true, "the back end may write \(topic): \(String(describing: code))")
            XCTAssertTrue(car.wait(seconds: 5) { car.payloads(on: topic).contains("from the back end") }, "the car reads \(topic)")
        }
        // Another car can write neither this car's outbound topics nor its inbound ones.
        for topic in (outbound + inbound).map({ $0.replacingOccurrences(of: "{id}", with: vehicle) }) {
            let code = try otherCar.publish(topic, "forged", qos: .atLeastOnce)
            XCTAssertEqual(code.map { $0 >= 0x80 }, true, "another car may not write \(topic): \(String(describing: code))")
        }
    }
}

import CommandLineKit

extension Command {
    /// `carkey-agent demo`: says what the product is and runs the crypto self-test.
    static let demo = Command(
        name: "demo",
        summary: "Describe the gateway and run the crypto self-test",
        exitStatuses: [
            ExitStatus(0, "every self-test check passed"),
            ExitStatus(1, "a self-test check failed"),
        ],
        action: { _ in
            print("""
                OpenCarKey Gateway: the car side of a phone-as-car-key system.
                A phone holding a P-256 key is authenticated by challenge-response over
                Bluetooth LE; UWB ranging (DW3000) checks that it is really near the car;
                lock actuators are driven through GPIO; events go to the cloud over MQTT
                and the car keeps working offline.
                Status: protocol, keys, GPIO actuation, serial console, cloud link, the
                Bluetooth LE link (BlueZ) and UWB ranging (DW3000) are built; they run
                against simulated hardware and, for BLE and GPIO, the real kernel stacks in
                a VM (`make run` plays them through). None of it has run on a real board yet.
                """)
            print("")
            let results = runCryptoSelfTest()
            if results.isEmpty {
                print("crypto self-test: no checks registered yet")
                return 0
            }
            for result in results {
                print("crypto self-test: \(result.passed ? "PASS" : "FAIL")  \(result.name)")
            }
            let failed = results.filter { !$0.passed }.count
            print("crypto self-test: \(results.count - failed) passed, \(failed) failed")
            return failed == 0 ? 0 : 1
        }
    )
}

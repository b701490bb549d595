// The DW3000 driver against a fuzzed SPI device: every register read returns the next input
// bytes (zeros once they run out), so bring-up and interrupt service see arbitrary chip answers.
import Drivers
import Protocol

final class FuzzedSPI: SPIDevice {
    private let input: Bytes
    private var offset = 0
    private(set) var transfers = 0
    private(set) var badHeader: Bytes?
    private(set) var clockHertz: UInt32 = 1_000_000

    init(_ input: Bytes) { self.input = input }

    func transfer(write: [UInt8], readCount: Int) throws(SPIError) -> [UInt8] {
        transfers += 1
        if DW3000Header.decode(write) == nil, badHeader == nil { badHeader = write }
        let end = min(offset + readCount, input.count)
        var out = offset < end ? Array(input[offset..<end]) : []
        offset = max(offset, end)
        out += Bytes(repeating: 0, count: readCount - out.count)
        return out
    }

    func setClock(hertz: UInt32) throws(SPIError) { clockHertz = hertz }
}

final class NoDelay: UWBDelay {
    func delay(micros: UInt32) {}
}

enum UWBTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("dw3000-driver", "DW3000Driver.bringUp + serviceInterrupt over a fuzzed SPI device: every transaction header the driver sends decodes (DW3000Header.decode); <= 4 events per service; received payloads <= 1021 bytes; transactions bounded") { input throws(PropertyViolation) in
            let spi = FuzzedSPI(input)
            guard let driver = try? DW3000Driver(spi: spi, delay: NoDelay()) else { return false }
            var up = false
            if (try? driver.bringUp()) != nil {
                up = true
                for _ in 0..<4 {
                    guard let events = try? driver.serviceInterrupt() else { break }
                    try require(events.count <= 8, "events per interrupt bounded")
                    for case .received(let payload, _, let quality, _) in events {
                        try require(payload.count <= DW3000Driver.maximumPayload, "payload <= maximumPayload")
                        try require(quality.isFinite, "STS quality finite")
                    }
                }
            }
            try require(spi.badHeader == nil, "driver sends only valid headers, got \(spi.badHeader ?? [])")
            try require(spi.transfers <= 5000, "bring-up and service bounded (\(spi.transfers) transfers)")
            return up
        },
    ]
}

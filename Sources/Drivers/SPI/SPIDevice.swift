// The seam between a chip driver and an SPI bus: spidev on the car, a register-level simulator
// in tests (SimulatedDW3000). One call is one transaction with chip select held throughout,
// because the DW3000 reads a header and answers in the same select.

public protocol SPIDevice: AnyObject {
    /// Clocks out `write`, then `readCount` more bytes (zeros out), chip select held active the
    /// whole time; returns the `readCount` bytes clocked in after `write`.
    func transfer(write: [UInt8], readCount: Int) throws(SPIError) -> [UInt8]
    /// Sets the bus clock for the following transactions (the DW3000 needs at most 7 MHz until
    /// its PLL locks, then takes up to 38 MHz).
    func setClock(hertz: UInt32) throws(SPIError)
    var clockHertz: UInt32 { get }
}

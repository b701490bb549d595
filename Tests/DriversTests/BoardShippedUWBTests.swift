// The shipped board files for boards with a UWB module parse with the agent's own parser, carry
// the module with its IRQ line as an input on the board's header chip, and keep the safety rules
// of the Raspberry Pi files (active-high actuators with pull-downs); the Pi files for a car
// without the module carry none. The SK-TDA4VM file uses TI's main_gpio0 (label 600000.gpio)
// with the same header pins as the Pi files.
import XCTest
@testable import Drivers

final class BoardShippedUWBTests: XCTestCase {
    private let headerChips = ["raspberrypi4-uwb": "pinctrl-bcm2711", "raspberrypi5-uwb": "pinctrl-rp1", "sk-tda4vm": "600000.gpio"]

    func testEveryRealBoardFileHasAUWBModuleOnItsHeaderChip() throws {
        for (name, chip) in headerChips {
            let board = try BoardDescription.load(path: GPIOFixtures.boardPath(name))
            XCTAssertEqual(board.name, name)
            let uwb = try XCTUnwrap(board.uwb, name)
            let irq = try XCTUnwrap(uwb.interrupt, name)
            XCTAssertEqual(irq.chipAddress, GPIOChipAddress.label(chip), name)
            XCTAssertFalse(irq.activeLow, "\(name): the DW3000 IRQ is active high by default")
            XCTAssertEqual(irq.bias, .pullDown, "\(name): a sleeping chip leaves IRQ floating")
            XCTAssertTrue(uwb.spidev.hasPrefix("/dev/spidev"), name)
            for config in Array(board.outputs.values) + Array(board.inputs.values) {
                XCTAssertEqual(config.chipAddress, GPIOChipAddress.label(chip), "\(name): one chip for the whole header")
            }
            for role in OutputRole.allCases {
                let config = try XCTUnwrap(board.outputs[role], "\(name) \(role)")
                XCTAssertFalse(config.activeLow, "\(name) \(role)")
                XCTAssertEqual(config.bias, .pullDown, "\(name) \(role)")
            }
        }
    }

    func testThePiFilesWithoutAModuleHaveNoUWBObject() throws {
        for name in ["raspberrypi4-no-uwb", "raspberrypi5-no-uwb"] {
            XCTAssertNil(try BoardDescription.load(path: GPIOFixtures.boardPath(name)).uwb, name)
        }
    }

    func testTheSKTDA4VMUsesTIsBallNumbersForThePiHeaderPositions() throws {
        let sk = try BoardDescription.load(path: GPIOFixtures.boardPath("sk-tda4vm"))
        // Header pin 11 is GPIO0_71, 13 GPIO0_82, 15 GPIO0_11, 37 GPIO0_115, 22 GPIO0_8
        // (TI's "RPi 40-pin header programming" table for the SK).
        XCTAssertEqual(sk.outputs[.lock]?.line, 71)
        XCTAssertEqual(sk.outputs[.unlock]?.line, 82)
        XCTAssertEqual(sk.outputs[.trunkRelease]?.line, 11)
        XCTAssertEqual(sk.inputs[.pairingButton]?.line, 115)
        XCTAssertEqual(sk.uwb?.interrupt?.line, 8)
        XCTAssertEqual(sk.uwb?.spidev, "/dev/spidev8.0")
        XCTAssertEqual(sk.uwb?.spiHertz, 2_000_000, "a GPIO-driven SPI bus")
    }
}

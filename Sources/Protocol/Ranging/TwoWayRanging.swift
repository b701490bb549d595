// Time of flight from two-way ranging timestamps (docs/protocol.md section 19). All inputs are
// chip timestamps; every interval is taken on one chip's clock, modulo 2^40, so neither side
// needs the other's clock and a wrap inside a round does not matter.

public enum TwoWayRanging {
    /// The six timestamps of a DS-TWR round: `pollTx`, `responseRx`, `finalTx` on the
    /// initiator's clock; `pollRx`, `responseTx`, `finalRx` on the responder's.
    public struct DoubleSided: Sendable, Equatable {
        public let pollTx, pollRx, responseTx, responseRx, finalTx, finalRx: UWBTimestamp

        public init(pollTx: UWBTimestamp, pollRx: UWBTimestamp, responseTx: UWBTimestamp,
                    responseRx: UWBTimestamp, finalTx: UWBTimestamp, finalRx: UWBTimestamp) {
            self.pollTx = pollTx
            self.pollRx = pollRx
            self.responseTx = responseTx
            self.responseRx = responseRx
            self.finalTx = finalTx
            self.finalRx = finalRx
        }

        /// Ra: the initiator's round trip, Poll out to Response in.
        public var ra: UInt64 { responseRx.units(since: pollTx) }
        /// Rb: the responder's round trip, Response out to Final in.
        public var rb: UInt64 { finalRx.units(since: responseTx) }
        /// Da: the initiator's reply, Response in to Final out.
        public var da: UInt64 { finalTx.units(since: responseRx) }
        /// Db: the responder's reply, Poll in to Response out.
        public var db: UInt64 { responseTx.units(since: pollRx) }

        /// ToF in DTU, asymmetric DS-TWR.
        public var timeOfFlightUnits: Double {
            TwoWayRanging.doubleSided(ra: Double(ra), rb: Double(rb), da: Double(da), db: Double(db))
        }
    }

    /// ToF = (Ra x Rb - Da x Db) / (Ra + Rb + Da + Db). Clock drift cancels to first order
    /// even with unequal replies, which is what lets the replies be randomised. In Double:
    /// each product rounds by about 2^-53 of itself (~100 DTU^2 for 15 ms intervals), which the
    /// division by the sum shrinks to well under a thousandth of a DTU.
    public static func doubleSided(ra: Double, rb: Double, da: Double, db: Double) -> Double {
        (ra * rb - da * db) / (ra + rb + da + db)
    }

    /// SS-TWR without correction: (Tround - Treply) / 2. Its error is about half the clock
    /// difference times the reply (20 ppm x 1 ms is 3 m), shown only for comparison.
    public static func singleSided(roundTrip: Double, reply: Double) -> Double {
        (roundTrip - reply) / 2
    }

    /// SS-TWR with the reply rescaled to the initiator's clock: `clockOffsetRatio` is how much
    /// faster the initiator's clock runs than the responder's ((fA - fB) / fB, e.g. from the
    /// carrier integrator). Any error in the ratio comes back times the reply.
    public static func singleSided(roundTrip: Double, reply: Double, clockOffsetRatio: Double) -> Double {
        (roundTrip - reply * (1 + clockOffsetRatio)) / 2
    }
}

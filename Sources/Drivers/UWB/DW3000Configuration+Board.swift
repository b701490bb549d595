// The board file's "uwb" object (BoardUWB, already checked when the file was read) as a driver
// configuration; the rest (PAC, preamble length, STS threshold, error budget) keeps its defaults.

extension DW3000Configuration {
    public init(board: BoardUWB) {
        self.init()
        channel = board.channel == 9 ? .nine : .five
        preambleCode = board.preambleCode
        stsLength = Int(board.stsLength)
        txAntennaDelay = board.txAntennaDelay
        rxAntennaDelay = board.rxAntennaDelay
        fastSPIHertz = board.spiHertz
    }
}

// The simulated board, built in so `carkey-agent run --simulate` works from any directory
// without a board file. A copy of board/simulated.json; a test keeps the two identical.

enum SimulatedBoard {
    static let json = #"""
{
  "name": "simulated",
  "description": "The simulated chip used by tests and carkey-agent --simulate. Same roles and offsets as the Raspberry Pi boards, on a chip named sim-gpio.",
  "pulseWidthMillis": 300,
  "debounceMillis": 30,
  "pairingHoldMillis": 5000,
  "feedbackSettleMillis": 150,
  "outputs": {
    "lock":          { "chip": "sim-gpio", "line": 17, "activeLow": false, "bias": "pull-down" },
    "unlock":        { "chip": "sim-gpio", "line": 27, "activeLow": false, "bias": "pull-down" },
    "trunkRelease":  { "chip": "sim-gpio", "line": 22, "activeLow": false, "bias": "pull-down" },
    "feedbackLight": { "chip": "sim-gpio", "line": 23, "activeLow": false, "bias": "pull-down" }
  },
  "inputs": {
    "doorOpen":      { "chip": "sim-gpio", "line": 5,  "activeLow": true, "bias": "pull-up" },
    "trunkOpen":     { "chip": "sim-gpio", "line": 6,  "activeLow": true, "bias": "pull-up" },
    "lockState":     { "chip": "sim-gpio", "line": 13, "activeLow": true, "bias": "pull-up" },
    "pairingButton": { "chip": "sim-gpio", "line": 26, "activeLow": true, "bias": "pull-up" },
    "doorHandle":    { "chip": "sim-gpio", "line": 16, "activeLow": true, "bias": "pull-up" }
  }
}
"""#
}

// Inside the car engine every check throws the fault it would report, so the code that
// rejects and the code that answers cannot disagree.

extension FaultCode: Error {}

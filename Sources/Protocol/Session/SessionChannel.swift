// One side's half of an established session: seals outgoing records with a strictly increasing
// counter and opens incoming ones, refusing any counter not above the last accepted one.

struct SessionChannel: Sendable {
    private let sendKey: Bytes
    private let receiveKey: Bytes
    private let sendDirection: Direction
    private let receiveDirection: Direction
    /// The counter the next sealed record will carry.
    private(set) var nextSendCounter: UInt64
    /// The highest counter accepted so far; nil until the first record arrives.
    private(set) var lastReceivedCounter: UInt64?
    /// Refuse to seal beyond this counter: the caller must handshake again instead of wrapping.
    let sendLimit: UInt64

    init(keys: SessionKeys, isCar: Bool, nextSendCounter: UInt64, lastReceivedCounter: UInt64?, sendLimit: UInt64) {
        sendKey = isCar ? keys.carToPhone : keys.phoneToCar
        receiveKey = isCar ? keys.phoneToCar : keys.carToPhone
        sendDirection = isCar ? .carToPhone : .phoneToCar
        receiveDirection = isCar ? .phoneToCar : .carToPhone
        self.nextSendCounter = nextSendCounter
        self.lastReceivedCounter = lastReceivedCounter
        // Below UInt64.max so `counter + 1` can never overflow.
        self.sendLimit = min(sendLimit, UInt64.max - 1)
    }

    var canSend: Bool { nextSendCounter <= sendLimit }

    /// Encrypts `plaintext` as a record of `type`. The counter advances only on success, and
    /// never past `sendLimit` (then `.sessionExpired`), so no (key, nonce) pair repeats.
    mutating func seal(_ type: MessageType, _ plaintext: Bytes) throws(FaultCode) -> Bytes {
        guard canSend else { throw .sessionExpired }
        let counter = nextSendCounter
        let header = EncryptedRecord.header(type: type, counter: counter)
        let nonce = RecordNonce.make(direction: sendDirection, counter: counter)
        let sealed: (ciphertext: Bytes, tag: Bytes)
        do {
            sealed = try AESGCM.seal(plaintext, key: sendKey, nonce: nonce, authenticating: header)
        } catch {
            throw .internalError
        }
        nextSendCounter = counter + 1
        return header + sealed.ciphertext + sealed.tag
    }

    /// Authenticates and decrypts, then enforces the counter rule. Only a record that decrypts
    /// moves the counter; a forged one changes nothing.
    mutating func open(_ record: EncryptedRecord) throws(FaultCode) -> Bytes {
        let nonce = RecordNonce.make(direction: receiveDirection, counter: record.counter)
        let plaintext: Bytes
        do {
            plaintext = try AESGCM.open(ciphertext: record.ciphertext, tag: record.tag, key: receiveKey,
                                        nonce: nonce, authenticating: record.header)
        } catch {
            throw .decryptionFailed
        }
        if let last = lastReceivedCounter {
            if record.counter == last { throw .replayedCounter }
            if record.counter < last { throw .outOfOrderCounter }
        }
        lastReceivedCounter = record.counter
        return plaintext
    }
}

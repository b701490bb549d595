// Car-to-phone messages: notifications when the phone enabled them (all fragments at once,
// ATT does not acknowledge them), otherwise indications one at a time, each released by the
// phone's Handle Value Confirmation. Before the phone subscribes, a few messages wait.
import Protocol

extension ATTServerConnection {
    /// The PDUs to write now for `message`; more may follow from `receive` (confirmations,
    /// a subscription). Messages stay in order.
    public mutating func send(message: Bytes) throws(ATTSendError) -> [Bytes] {
        guard !isClosed else { throw .closed }
        let fragments: [Bytes]
        do throws(FragmentError) {
            fragments = try MessageFragmenter.fragments(of: message, maxFragment: mtu - 3)
        } catch {
            throw .invalidMessage(error)
        }
        if notificationsEnabled {
            return notifications(fragments)
        }
        guard queuedMessageCount < Self.maxQueuedMessages else { throw .backlogFull(limit: Self.maxQueuedMessages) }
        if indicationsEnabled && !notificationsEnabled {
            indicationQueue.append(fragments)
            return releaseIndication()
        }
        unsubscribedQueue.append(message)
        return []
    }

    /// Marks the link unusable: later input is ignored and `send` throws.
    public mutating func close() {
        isClosed = true
        reassembler.reset()
        unsubscribedQueue.removeAll()
        indicationQueue.removeAll()
    }

    mutating func setCCCD(_ handle: UInt16, _ bits: UInt16) {
        cccd[handle] = bits
    }

    private func notifications(_ fragments: [Bytes]) -> [Bytes] {
        guard let handle = carToPhoneHandle else { return [] }
        return fragments.map { ATTPDU.notification(handle: handle, value: $0) }
    }

    /// After a CCCD write: with notifications everything waiting goes out now; with
    /// indications only, waiting messages join the indication queue.
    mutating func releaseAfterSubscriptionChange() -> [Bytes] {
        if notificationsEnabled {
            var pdus = notifications(Array(indicationQueue.joined()))
            indicationQueue.removeAll()
            for message in unsubscribedQueue {
                // Validated by `send`; the MTU only grows, so this cannot throw.
                if let fragments = try? MessageFragmenter.fragments(of: message, maxFragment: mtu - 3) {
                    pdus += notifications(fragments)
                }
            }
            unsubscribedQueue.removeAll()
            return pdus
        }
        if indicationsEnabled {
            for message in unsubscribedQueue {
                if let fragments = try? MessageFragmenter.fragments(of: message, maxFragment: mtu - 3) {
                    indicationQueue.append(fragments)
                }
            }
            unsubscribedQueue.removeAll()
            return releaseIndication()
        }
        return []
    }

    /// A confirmation with none outstanding is ignored (nothing to release, no response exists).
    mutating func confirmationReceived() -> [Bytes] {
        guard awaitingConfirmation else { return [] }
        awaitingConfirmation = false
        return releaseIndication()
    }

    /// The next indication, if none is outstanding (ATT allows one at a time).
    private mutating func releaseIndication() -> [Bytes] {
        guard !awaitingConfirmation, indicationsEnabled, let handle = carToPhoneHandle,
              !indicationQueue.isEmpty else { return [] }
        let fragment = indicationQueue[0].removeFirst()
        if indicationQueue[0].isEmpty { indicationQueue.removeFirst() }
        awaitingConfirmation = true
        return [ATTPDU.indication(handle: handle, value: fragment)]
    }
}

// The adapter's bring-up and upkeep as a sans-IO state machine: events and time in, commands
// and reports out. The owner sends `nextCommand` on the control socket, feeds every event to
// `receive`, and calls `tick` when `nextDeadlineMillis` passes.
//
// Why a queue with one command in flight: mgmt replies carry only the opcode, so two commands
// with the same opcode in flight could not be told apart, and the bring-up order matters
// (privacy and BR/EDR off only while powered off).
//
// Disconnects have a lane of their own, also one in flight: the kernel answers a Disconnect
// only when the controller reports the link down, which for a phone that vanished is its
// supervision timeout, and adapter upkeep must not wait that long. Linux 6.1 also keeps one
// pending Disconnect per adapter and answers a second one Busy.

public struct AdapterController: Sendable {
    enum Step: Equatable, Sendable {
        case readIndexList
        case readInfo(UInt16)
        case powerOff, setPrivacy, setLowEnergy, bondableOff, bredrOff, setName, setConnectable, powerOn
        case advertisingSettingOff, removeAdvertising, addAdvertising
        case connectionInfo(BluetoothAddress, BluetoothAddressType)
    }

    private struct InFlight: Sendable {
        let step: Step
        let command: MgmtCommand
        let sentAt: UInt64
    }

    private struct Peer: Equatable, Sendable {
        let address: BluetoothAddress
        let type: BluetoothAddressType
    }

    public private(set) var configuration: AdapterConfiguration
    public private(set) var state = AdapterState()
    private var prepared: AdapterConfiguration.Prepared
    private var queue: [Step] = []
    private var inFlight: InFlight?
    private var retryAt: UInt64 = 0
    private var failures = 0
    private var reports: [AdapterReport] = []
    /// The latest time any input carried; failures schedule their retry from it.
    private var now: UInt64 = 0
    private var disconnectQueue: [Peer] = []
    private var disconnectInFlight: (peer: Peer, sentAt: UInt64)?
    private var disconnectRetryAt: UInt64 = 0

    /// Throws when the configuration cannot be encoded (name too long, IRK size, data too long).
    public init(configuration: AdapterConfiguration) throws(MgmtError) {
        self.configuration = configuration
        self.prepared = try configuration.prepare()
    }

    // MARK: Inputs

    /// Starts (or restarts) bring-up from the beginning.
    public mutating func start(nowMillis: UInt64) {
        now = nowMillis
        inFlight = nil
        failures = 0
        retryAt = nowMillis
        switch configuration.adapter {
        case .index(let index):
            state.index = index
            queue = [.readInfo(index)] + bringUpSteps
        case .address:
            state.index = nil
            queue = [.readIndexList]
        }
    }

    /// Replaces the advertising data (a new rotating identifier) by removing the instance and
    /// adding it again. Add Advertising on the same instance would replace the data in place,
    /// but the kernel keeps an instance's private address until that instance's own RPA timer
    /// runs out; a new instance gets a new resolvable private address when it is enabled
    /// (Linux 6.1 hci_get_random_address: an instance without a valid address draws one). So
    /// identifier and address change together and neither links the old advertisement to the
    /// new one.
    public mutating func replaceAdvertisingData(_ data: [UInt8]) throws(MgmtError) {
        prepared.addAdvertising = try configuration.advertisingParameters(data)
        configuration.advertisingData = data
        guard state.powered, !bringUpPending else { return }
        queue.removeAll { $0 == .addAdvertising || $0 == .removeAdvertising }
        queue += [.removeAdvertising, .addAdvertising]
    }

    /// Asks for RSSI and TX power of a connected device; the answer arrives as a report.
    public mutating func requestConnectionInformation(address: BluetoothAddress, type: BluetoothAddressType) {
        guard state.index != nil else {
            reports.append(.connectionInfoFailed(address: address, type: type, status: .invalidIndex))
            return
        }
        queue.append(.connectionInfo(address, type))
    }

    /// Ends the LE connection to a peer (mgmt Disconnect: HCI reason 0x13, remote user
    /// terminated), so the phone learns at once that the car closed the link. The outcome comes
    /// as `.disconnected` or `.disconnectFailed`. A peer already waiting is not queued twice.
    public mutating func disconnect(address: BluetoothAddress, type: BluetoothAddressType) {
        let peer = Peer(address: address, type: type)
        guard state.index != nil, state.powered else {
            reports.append(.disconnectFailed(address: address, type: type, status: .notPowered))
            return
        }
        guard !disconnectQueue.contains(peer), disconnectInFlight?.peer != peer else { return }
        disconnectQueue.append(peer)
    }

    /// Drops a disconnect that has not been sent yet (a new link from the same address must not
    /// be cut by the old one's request); true when there was one. One already sent stays: the
    /// kernel applied it to the old connection.
    @discardableResult
    public mutating func cancelDisconnect(address: BluetoothAddress, type: BluetoothAddressType) -> Bool {
        let peer = Peer(address: address, type: type)
        guard let at = disconnectQueue.firstIndex(of: peer) else { return false }
        disconnectQueue.remove(at: at)
        return true
    }

    public mutating func receive(_ event: MgmtEvent, nowMillis: UInt64) {
        now = nowMillis
        if answersDisconnect(event) { return }
        if let current = inFlight, event.controllerIndex == current.command.controllerIndex {
            switch event.body {
            case .commandComplete(let opcode, let status, let parameters) where opcode == current.command.opcode.rawValue:
                inFlight = nil
                if status == .success { succeeded(current.step, parameters) } else { failed(current, status) }
                return
            case .commandStatus(let opcode, let status) where opcode == current.command.opcode.rawValue && status != .success:
                inFlight = nil
                failed(current, status)
                return
            default:
                break
            }
        }
        observe(event)
    }

    /// Times out an unanswered command. (Retries wait for `nextCommand` after `retryAt`.)
    public mutating func tick(nowMillis: UInt64) {
        now = nowMillis
        if let current = inFlight, nowMillis >= current.sentAt + configuration.commandTimeoutMillis {
            inFlight = nil
            fail(current.step, .commandTimedOut(current.command.opcode))
        }
        if let pending = disconnectInFlight, nowMillis >= pending.sentAt + configuration.disconnectTimeoutMillis {
            disconnectInFlight = nil
            reports.append(.disconnectFailed(address: pending.peer.address, type: pending.peer.type, status: .timeout))
        }
    }

    // MARK: Outputs

    /// The command to send now, if any: at most one is in flight, and none while backing off.
    /// Call until nil: the upkeep lane first, then the disconnect lane.
    public mutating func nextCommand(nowMillis: UInt64) -> MgmtCommand? {
        now = nowMillis
        if inFlight == nil, nowMillis >= retryAt, !queue.isEmpty {
            let step = queue.removeFirst()
            let command = self.command(for: step)
            inFlight = InFlight(step: step, command: command, sentAt: nowMillis)
            return command
        }
        if disconnectInFlight == nil, nowMillis >= disconnectRetryAt, let index = state.index, !disconnectQueue.isEmpty {
            let peer = disconnectQueue.removeFirst()
            disconnectInFlight = (peer, nowMillis)
            return .disconnect(address: peer.address, type: peer.type, index: index)
        }
        return nil
    }

    public mutating func takeReports() -> [AdapterReport] {
        defer { reports.removeAll() }
        return reports
    }

    /// When `tick`/`nextCommand` next has something to do; nil when only events can wake it.
    public var nextDeadlineMillis: UInt64? {
        var deadlines: [UInt64] = []
        if let current = inFlight {
            deadlines.append(current.sentAt + configuration.commandTimeoutMillis)
        } else if !queue.isEmpty {
            deadlines.append(retryAt)
        }
        if let pending = disconnectInFlight {
            deadlines.append(pending.sentAt + configuration.disconnectTimeoutMillis)
        } else if !disconnectQueue.isEmpty {
            deadlines.append(disconnectRetryAt)
        }
        return deadlines.min()
    }

    // MARK: Internals

    private var bringUpSteps: [Step] {
        let privacy = prepared.privacy != nil
        var steps: [Step] = []
        // Set Privacy and BR/EDR off are only accepted while powered off.
        if privacy || configuration.disableBREDR { steps.append(.powerOff) }
        if privacy { steps.append(.setPrivacy) }
        steps.append(.setLowEnergy)
        // Link-layer pairing stays off (the key protocol has its own ECDH and AES-GCM): a
        // bluetoothd that ran before us may have left the adapter bondable.
        steps.append(.bondableOff)
        if configuration.disableBREDR { steps.append(.bredrOff) }
        // Remove first so a stale instance of ours (from a previous run) cannot linger.
        steps += [.setName, .setConnectable, .powerOn, .removeAdvertising, .addAdvertising]
        return steps
    }

    /// Power-on is still ahead: it re-adds advertising itself.
    private var bringUpPending: Bool { queue.contains(.powerOn) || inFlight?.step == .powerOn }

    private func command(for step: Step) -> MgmtCommand {
        let index = state.index ?? mgmtNoControllerIndex
        switch step {
        case .readIndexList: return .readControllerIndexList()
        case .readInfo(let i): return .readControllerInfo(index: i)
        case .powerOff: return .setPowered(false, index: index)
        case .setPrivacy: return MgmtCommand(.setPrivacy, index: index, parameters: prepared.privacy ?? [0] + [UInt8](repeating: 0, count: 16))
        case .setLowEnergy: return .setLowEnergy(true, index: index)
        case .bondableOff: return .setBondable(false, index: index)
        case .bredrOff: return .setBREDR(false, index: index)
        case .setName: return MgmtCommand(.setLocalName, index: index, parameters: prepared.localName)
        case .setConnectable: return .setConnectable(true, index: index)
        case .powerOn: return .setPowered(true, index: index)
        case .advertisingSettingOff: return .setAdvertising(false, index: index)
        case .removeAdvertising: return .removeAdvertising(instance: configuration.instance, index: index)
        case .addAdvertising: return MgmtCommand(.addAdvertising, index: index, parameters: prepared.addAdvertising)
        case .connectionInfo(let address, let type): return .getConnectionInfo(address: address, type: type, index: index)
        }
    }

    /// The answer to the disconnect in flight, matched by the peer in its return parameters (a
    /// late answer to one given up on names another peer). Busy: another Disconnect is pending
    /// in the kernel, so this one is tried again after the first back-off step.
    private mutating func answersDisconnect(_ event: MgmtEvent) -> Bool {
        guard let pending = disconnectInFlight, event.controllerIndex == state.index else { return false }
        let status: MgmtStatus
        switch event.body {
        case .commandComplete(let opcode, let reported, let parameters) where opcode == MgmtOpcode.disconnect.rawValue:
            guard parameters.count < 7 || parameters.prefix(7).elementsEqual(pending.peer.address.bytes + [pending.peer.type.rawValue])
            else { return false }
            status = reported
        case .commandStatus(let opcode, let reported) where opcode == MgmtOpcode.disconnect.rawValue && reported != .success:
            status = reported
        default:
            return false
        }
        disconnectInFlight = nil
        switch status {
        case .success:
            reports.append(.disconnected(address: pending.peer.address, type: pending.peer.type))
        case .busy:
            disconnectQueue.insert(pending.peer, at: 0)
            disconnectRetryAt = now + configuration.retryFirstMillis
        default:
            reports.append(.disconnectFailed(address: pending.peer.address, type: pending.peer.type, status: status))
        }
        return true
    }

    /// The adapter went down or away: its links are gone, and so is every disconnect's purpose.
    private mutating func abandonDisconnects() {
        let peers = (disconnectInFlight.map { [$0.peer] } ?? []) + disconnectQueue
        disconnectInFlight = nil
        disconnectQueue.removeAll()
        for peer in peers {
            reports.append(.disconnectFailed(address: peer.address, type: peer.type, status: .notPowered))
        }
    }

    private mutating func enqueueAdvertising() {
        if !queue.contains(.addAdvertising) { queue.append(.addAdvertising) }
    }

    private mutating func succeeded(_ step: Step, _ parameters: [UInt8]) {
        failures = 0
        switch step {
        case .readIndexList:
            do throws(MgmtError) {
                let indexes = try MgmtControllerIndexList.parse(parameters)
                queue.insert(contentsOf: indexes.map { .readInfo($0) }, at: 0)
                notFoundIfResolutionExhausted()
            } catch {
                report(.malformedReply(.readControllerIndexList, error))
            }
        case .readInfo(let index):
            guard let info = try? MgmtControllerInfo.parse(parameters) else {
                report(.malformedReply(.readControllerInfo, .truncated(what: "controller info", needed: 280, available: parameters.count)))
                return
            }
            if state.index == nil {
                // Resolving by address: adopt the first controller with ours, skip the rest.
                guard case .address(let wanted) = configuration.adapter, info.address == wanted else {
                    notFoundIfResolutionExhausted()
                    return
                }
                queue.removeAll(where: \.isResolution)
                state.index = index
                queue.insert(contentsOf: bringUpSteps, at: 0)
            }
            guard index == state.index else { return }
            state.address = info.address
            state.settings = info.currentSettings
            // Set Advertising on makes the kernel ignore instances: switch it off before ours.
            if info.currentSettings.contains(.advertising), let at = queue.firstIndex(of: .removeAdvertising) {
                queue.insert(.advertisingSettingOff, at: at)
            }
        case .powerOff, .setPrivacy, .setLowEnergy, .bondableOff, .bredrOff, .setConnectable, .powerOn, .advertisingSettingOff:
            if let settings = try? MgmtCurrentSettings.parse(parameters) { state.settings = settings }
        case .setName:
            break
        case .removeAdvertising:
            state.advertising = false
        case .addAdvertising:
            state.advertising = true
            reports.append(.advertising(address: state.address))
        case .connectionInfo(let address, let type):
            do throws(MgmtError) {
                reports.append(.connectionInfo(try MgmtConnectionInfo.parse(parameters)))
            } catch {
                reports.append(.connectionInfoFailed(address: address, type: type, status: .failed))
            }
        }
    }

    /// During address resolution: every listed controller answered and none matched.
    private mutating func notFoundIfResolutionExhausted() {
        guard state.index == nil, case .address(let wanted) = configuration.adapter,
              !queue.contains(where: { if case .readInfo = $0 { return true } else { return false } }) else { return }
        fail(.readIndexList, .adapterNotFound(wanted))
    }

    private mutating func failed(_ current: InFlight, _ status: MgmtStatus) {
        switch (current.step, status) {
        case (.removeAdvertising, .invalidParameters):
            // There was no instance to remove: the goal is met.
            succeeded(current.step, [])
        case (.bredrOff, .notSupported):
            // An LE-only controller has no BR/EDR to switch off.
            succeeded(current.step, [])
        case (.readInfo, _) where state.index == nil:
            // A controller vanished while we were asking: try the others.
            notFoundIfResolutionExhausted()
        case (.connectionInfo(let address, let type), _):
            // A query, not a goal: report and move on (Not Connected when the phone just left).
            reports.append(.connectionInfoFailed(address: address, type: type, status: status))
        case (.addAdvertising, _) where !state.powered, (.removeAdvertising, _) where !state.powered:
            // Powered off meanwhile: the next power-on re-adds advertising. Not reported: a power
            // off sends Advertising Removed before New Settings, so our re-add always races it
            // (the kernel answers Not Supported; seen in the VM lane on every power cycle).
            break
        default:
            fail(current.step, .commandFailed(current.command.opcode, status))
        }
    }

    /// Records the failure and puts the step back at the head, to be retried after the back-off.
    private mutating func fail(_ step: Step, _ error: AdapterError) {
        report(error)
        if case .connectionInfo(let address, let type) = step {
            reports.append(.connectionInfoFailed(address: address, type: type, status: .timeout))
            return
        }
        failures += 1
        let shift = UInt64(min(failures - 1, 16))
        retryAt = now + min(configuration.retryFirstMillis << shift, configuration.retryMaxMillis)
        queue.insert(step, at: 0)
    }

    private mutating func report(_ error: AdapterError) {
        state.lastError = error
        reports.append(.failed(error))
    }

    /// Events not answering our command: settings, index and advertising changes.
    private mutating func observe(_ event: MgmtEvent) {
        let ours = event.controllerIndex == state.index
        switch event.body {
        case .indexAdded:
            if ours, case .index = configuration.adapter {
                // Back (driver rebound, dongle replugged): it comes up unpowered, so start over.
                queue = [.readInfo(event.controllerIndex)] + bringUpSteps
                failures = 0
                retryAt = 0
            } else if state.index == nil, case .address = configuration.adapter {
                // A new controller while we look for ours: ask it first, without waiting out a back-off.
                queue.insert(.readInfo(event.controllerIndex), at: 0)
                retryAt = now
            }
        case .indexRemoved where ours:
            state.settings = []
            state.advertising = false
            queue.removeAll()
            inFlight = nil
            abandonDisconnects()
            report(.adapterRemoved(index: event.controllerIndex))
            if case .address = configuration.adapter { state.index = nil }
        case .newSettings(let settings) where ours:
            let wasPowered = state.powered
            state.settings = settings
            if !wasPowered, settings.contains(.powered), !bringUpPending {
                // Power-on (by us earlier, or by bluetoothd, rfkill...) starts with no instances.
                enqueueAdvertising()
            } else if wasPowered, !settings.contains(.powered) {
                state.advertising = false
                if !bringUpPending { queue.removeAll { $0 == .addAdvertising || $0 == .removeAdvertising } }
                abandonDisconnects()
            }
        case .advertisingRemoved(let instance) where ours && instance == configuration.instance:
            state.advertising = false
            if state.powered, !bringUpPending { enqueueAdvertising() }
        case .advertisingAdded(let instance) where ours && instance == configuration.instance:
            // Another process wrote our instance number (the kernel does not echo our own adds).
            // Not fought over: two daemons re-adding in turn would loop. Reported as lost.
            state.advertising = false
        case .controllerError(let code) where ours:
            report(.controllerError(index: event.controllerIndex, code: code))
        case .deviceConnected(let address, let type, _, _) where ours:
            reports.append(.deviceConnected(address: address, type: type))
        case .deviceDisconnected(let address, let type, let reason) where ours:
            reports.append(.deviceDisconnected(address: address, type: type, reason: reason))
            // The peer left before our Disconnect went out: nothing left to end.
            if cancelDisconnect(address: address, type: type) {
                reports.append(.disconnectFailed(address: address, type: type, status: .notConnected))
            }
        default:
            break
        }
    }
}

extension AdapterController.Step {
    /// Steps that look for the adapter by address; dropped once it is found.
    var isResolution: Bool {
        switch self {
        case .readIndexList, .readInfo: return true
        default: return false
        }
    }
}

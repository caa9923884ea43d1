/// What was seen of each peripheral, for at most `capacity` of them. A place full of devices — or
/// a hostile controller inventing a new address per report — must not grow a map without end:
/// when full, the peripheral heard of longest ago gives way (`evicting`), or new ones are turned
/// away (`keepingFirst`), as the caller needs.
public struct BoundedPeripheralMap<Value>: Sendable where Value: Sendable {
    /// What to do with a newcomer once the map is full.
    public enum Policy: Sendable {
        /// Forget the one first seen longest ago (merging scan responses needs the recent ones).
        case evicting
        /// Keep the first ones and refuse newcomers (a list should not change under the reader).
        case keepingFirst
    }

    /// Most peripherals remembered at once (at least 1).
    public let capacity: Int
    /// Whether a full map evicts its oldest entry or turns newcomers away.
    public let policy: Policy
    private var values: [BLEAddress: Value] = [:]
    /// Addresses in the order first seen; `head` skips the evicted ones (compacted now and then).
    private var order: [BLEAddress] = []
    private var head = 0
    /// Newcomers turned away or evicted since the start.
    public private(set) var overflow = 0

    /// Builds an empty map; a capacity below 1 is taken as 1.
    public init(capacity: Int, policy: Policy) {
        self.capacity = max(1, capacity)
        self.policy = policy
    }

    /// What was stored for `address`; nil if it was never seen, was evicted or was turned away.
    public subscript(address: BLEAddress) -> Value? { values[address] }

    /// Peripherals held now, never more than `capacity`.
    public var count: Int { values.count }

    /// The values in the order their addresses were first seen.
    public var inOrder: [Value] { order[head...].compactMap { values[$0] } }

    /// Stores `value` for `address`; returns false when a newcomer was turned away.
    @discardableResult
    public mutating func set(_ value: Value, for address: BLEAddress) -> Bool {
        if values[address] != nil {
            values[address] = value
            return true
        }
        if values.count >= capacity {
            overflow += 1
            switch policy {
            case .keepingFirst:
                return false
            case .evicting:
                values[order[head]] = nil
                head += 1
                if head >= capacity {
                    order.removeFirst(head)
                    head = 0
                }
            }
        }
        values[address] = value
        order.append(address)
        return true
    }
}

import HAL
import Testing

@Suite struct BoundedPeripheralMapTests {
    static func address(_ n: Int) -> BLEAddress {
        BLEAddress(bytes: [0xC0, 0, 0, 0, UInt8(n >> 8), UInt8(n & 0xFF)], kind: .random)!
    }

    @Test func evictingForgetsTheOldestAndStaysAtCapacity() {
        var map = BoundedPeripheralMap<Int>(capacity: 3, policy: .evicting)
        for n in 0..<10 { map.set(n, for: Self.address(n)) }
        #expect(map.count == 3)
        #expect(map.inOrder == [7, 8, 9])
        #expect(map[Self.address(0)] == nil && map[Self.address(9)] == 9)
        #expect(map.overflow == 7)
        map.set(90, for: Self.address(9))
        #expect(map.inOrder == [7, 8, 90], "an update keeps its place")
    }

    @Test func keepingFirstTurnsNewcomersAway() {
        var map = BoundedPeripheralMap<Int>(capacity: 2, policy: .keepingFirst)
        let first = map.set(1, for: Self.address(1)), second = map.set(2, for: Self.address(2))
        #expect(first && second)
        let third = map.set(3, for: Self.address(3))
        #expect(!third)
        let update = map.set(20, for: Self.address(2))
        #expect(update, "a known one still updates")
        #expect(map.inOrder == [1, 20] && map.overflow == 1)
    }

    @Test func aLongFloodCostsNoMoreThanTheCapacity() {
        var map = BoundedPeripheralMap<[UInt8]>(capacity: 512, policy: .evicting)
        for n in 0..<100_000 { map.set([UInt8(n & 0xFF)], for: Self.address(n % 60_000)) }
        #expect(map.count == 512)
        #expect(map.inOrder.count == 512)
    }
}

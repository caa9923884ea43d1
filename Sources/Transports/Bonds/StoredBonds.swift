import BLEProtocol
import HAL
import Synchronization

/// The bonds of one controller in its bond store file, written on every new bond.
package final class StoredBonds: BondKeeper {
    private let store: Mutex<BondStore>

    package init(_ store: BondStore) { self.store = Mutex(store) }

    package var current: BondStore { store.withLock { $0 } }

    package func bond(for address: BLEAddress) -> Bond? { store.withLock { $0.bond(for: address) } }

    package func keep(_ bond: Bond) throws(BondStoreError) {
        let result = store.withLock { s -> Result<Void, BondStoreError> in
            var next = s
            next.add(bond)
            do throws(BondStoreError) { try next.save() } catch { return .failure(error) }
            s = next
            return .success(())
        }
        try result.get()
    }
}

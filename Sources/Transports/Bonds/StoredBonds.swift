import BLEProtocol
import HAL
import Synchronization

/// The bonds of one controller in its bond store file, written on every new bond: read again,
/// changed and written under the store's lock (``BondStore/update(controller:path:_:)``), so
/// that bonds another hwprobe kept with the same controller meanwhile are not lost.
package final class StoredBonds: BondKeeper {
    private let store: Mutex<BondStore>

    package init(_ store: BondStore) { self.store = Mutex(store) }

    package var current: BondStore { store.withLock { $0 } }

    package func bond(for address: BLEAddress) -> Bond? { store.withLock { $0.bond(for: address) } }

    package func keep(_ bond: Bond) throws(BondStoreError) {
        let result = store.withLock { s -> Result<Void, BondStoreError> in
            do throws(BondStoreError) {
                s = try BondStore.update(controller: s.controller, path: s.path) { $0.add(bond) }
            } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }
}

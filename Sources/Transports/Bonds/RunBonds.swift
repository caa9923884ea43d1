import BLEProtocol
import HAL
import Synchronization

/// Bonds kept in memory for one run: a replay's simulated pairings are kept while the command
/// runs (the next connection to the same device encrypts, as it would live) and forgotten when
/// it ends, never written to the bond store (the recording had no keys; these are the replay's).
package final class RunBonds: BondKeeper {
    private let bonds = Mutex<[Bond]>([])

    package init() {}

    package func bond(for address: BLEAddress) -> Bond? { bonds.withLock { $0.last { $0.matches(address) } } }
    package func keep(_ bond: Bond) throws(BondStoreError) { bonds.withLock { $0.append(bond) } }
}

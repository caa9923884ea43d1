import CLinuxShims

/// Where a path's bytes would end up, so that two paths a command will write can be told apart
/// by what they name rather than how they are spelled (issue 27): `out.json`, `./out.json`,
/// `dir/../out.json`, a path through a symbolic link to the same directory, or a hard link to
/// the same file all name one place, and a command given two of them would write one over the
/// other (the decrypted vault replaced by a report, a capture by a cassette).
///
/// Only looked at, never opened: nothing is created and no device is touched.
package enum PathIdentity: Hashable, Sendable {
    /// Something exists there (every symbolic link followed): that file, by device and inode.
    case file(device: UInt64, inode: UInt64)
    /// Nothing exists there yet: the name in its directory, the directory by device and inode.
    case entry(directoryDevice: UInt64, directoryInode: UInt64, name: String)
    /// Not even the directory could be looked at: the spelling, as the only thing left to compare
    /// (the path's own check then says what is wrong with it).
    case spelling(String)

    package init(of path: String) {
        var info = hal_file_info()
        if hal_stat(path, &info) == 0 {
            self = .file(device: info.device, inode: info.inode)
            return
        }
        let directory = PrivateFile.directoryPath(of: path)
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        if !name.isEmpty, name != ".", name != "..", hal_stat(directory, &info) == 0, info.type == HAL_FILE_DIRECTORY {
            self = .entry(directoryDevice: info.device, directoryInode: info.inode, name: name)
        } else {
            self = .spelling(path)
        }
    }

    /// The first two of `paths` that name the same place (their indices, in order), or nil when
    /// every one names a place of its own.
    package static func firstClash(among paths: [String]) -> (first: Int, second: Int)? {
        var seen: [PathIdentity: Int] = [:]
        for (index, path) in paths.enumerated() {
            let identity = PathIdentity(of: path)
            if let earlier = seen[identity] { return (earlier, index) }
            seen[identity] = index
        }
        return nil
    }
}

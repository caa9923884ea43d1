import Glibc

/// A directory for private files (the bond store's), made with its missing parents, each new one
/// mode 0700 whatever the umask, so the files in it are not even listed to others.
package enum PrivateDirectory {
    /// Makes `path` and its missing parents; an existing directory is left as it is. Throws if a
    /// component exists and is not a directory (or a symbolic link to one).
    package static func create(_ path: String) throws(PrivateFileError) {
        guard !path.isEmpty else { throw .emptyPath }
        var built = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") where !component.isEmpty {
            built += "/" + component
            if mkdir(built, 0o700) == 0 {
                // mkdir applies the umask; make it exactly 0700.
                _ = chmod(built, 0o700)
                continue
            }
            let error = Errno.current
            guard error.code == EEXIST else { throw PrivateFileError(error, path: path, directory: built) }
            var info = stat()
            guard stat(built, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw .notADirectory(path: path, directory: built)
            }
        }
    }
}

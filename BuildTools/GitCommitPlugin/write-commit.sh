#!/bin/sh
# Writes BuildCommit.swift (`let buildCommit: String? = "abc1234"` or `= nil`) for hwprobe --version.
# Usage: write-commit.sh PACKAGE_DIR OUTPUT_DIR
# Run by the GitCommit build-tool plugin before every build. Never fails the build: without git,
# without a checkout, or in a checkout git will not read (another owner), the commit is nil. The
# file is rewritten only when its text changes, so an unchanged commit recompiles nothing.
package_dir=$1
output_dir=$2
commit=
if command -v git >/dev/null 2>&1; then
    # Only the package's own checkout counts: a tarball unpacked inside some other repository
    # must not report that repository's commit.
    top=$(git -C "$package_dir" rev-parse --show-toplevel 2>/dev/null) || top=
    if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$package_dir" && pwd -P)" ]; then
        commit=$(git -C "$package_dir" rev-parse --short HEAD 2>/dev/null) || commit=
    fi
fi
case $commit in
    *[!0-9a-f]* | "") value=nil ;;
    *) value="\"$commit\"" ;;
esac
text="// Generated at build time by BuildTools/GitCommitPlugin; not part of the source tree.
let buildCommit: String? = $value"
mkdir -p "$output_dir" || exit 0
out="$output_dir/BuildCommit.swift"
if [ ! -f "$out" ] || [ "$(cat "$out")" != "$text" ]; then
    printf '%s\n' "$text" > "$out.tmp" && mv "$out.tmp" "$out"
fi
exit 0

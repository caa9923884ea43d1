# Shared by scripts/demo and scripts/test: find the toolchain and install the C libraries
# (Debian packages) that the system-library targets link against.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="$PATH:/opt/swift/usr/bin"
fi
command -v swift >/dev/null 2>&1 || { echo "swift not found: install Swift 6 (https://swift.org/install)" >&2; exit 1; }

# Build-time libraries: BlueZ headers, libusb, libv4l2, zbar and zxing-cpp (QR), OpenSSL's libcrypto.
APT_PACKAGES=(pkg-config libbluetooth-dev libusb-1.0-0-dev libv4l-dev libzbar-dev libzxing-dev libssl-dev)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "installing: ${missing[*]}" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    fi
}

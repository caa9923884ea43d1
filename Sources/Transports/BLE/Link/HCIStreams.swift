import HAL

/// Opens whichever HCI transport a device URI names, so callers hold one `any HCIByteStream`.
public enum HCIStreams {
    /// Opens the transport `uri` names (hci, uart or tcp); other URIs are refused as not HCI.
    public static func open(_ uri: DeviceURI) async throws(HCILinkError) -> any HCIByteStream {
        switch uri {
        case .hci(let index): try await HCIUserChannelStream.open(controller: index)
        case .uart(let path, let baud, let rtscts): try await SerialHCIStream.open(path: path, baud: baud, rtscts: rtscts)
        case .tcp(let host, let port): try await TCPHCIStream.connect(host: host, port: port)
        default: throw .notAnHCITransport(uri.description)
        }
    }
}

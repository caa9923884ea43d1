import HAL

/// Opens the camera a device URI names (`hwprobe import --camera URI`).
package enum CameraSources {
    /// - `file:PATH[?pace=max]`: a YUV4MPEG2 file played on `clock` (see `FileCameraSource`).
    /// - `v4l2:/dev/videoN`: a V4L2 capture device, streamed with mmap buffers (in `v4l2Format`,
    ///   a fourcc such as `NM12`, when given: see `V4L2Camera.init`).
    /// - anything else: `CameraError.notACaptureDevice`, saying which URIs are cameras.
    public static func open(_ uri: DeviceURI, clock: any Clock<Duration>, v4l2Format: String? = nil) async throws(CameraError) -> any CameraSource {
        switch uri {
        case .file(let path, let paced):
            return try FileCameraSource(path: path, paced: paced, clock: clock)
        case .v4l2(let path):
            return try V4L2Camera(path: path, format: v4l2Format)
        default:
            throw .notACaptureDevice("\(uri) (cameras are v4l2:/dev/videoN or file:PATH.y4m)")
        }
    }
}

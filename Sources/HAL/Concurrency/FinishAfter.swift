extension AsyncThrowingStream.Continuation where Failure == any Error {
    /// Runs `body`, which yields into this stream, then ends the stream as `body` ended: finished
    /// when it returns or is cancelled, finished with its error when it throws.
    ///
    /// Why: a producer task that feeds a stream must end it on every path, and a cancelled
    /// consumer is not a failure; each camera and pipeline wrote these three endings out by hand.
    package func finish(after body: () async throws -> Void) async {
        do {
            try await body()
            finish()
        } catch is CancellationError {
            finish()
        } catch {
            finish(throwing: error)
        }
    }
}

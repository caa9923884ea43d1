import Testing
@testable import Capture

/// Latency percentiles from the pipeline's fixed-size histogram.
@Suite struct DecodingPipelineStatsTests {
    @Test func percentilesComeFromTheBucketsAndNeverExceedTheMaximum() {
        var stats = DecodingPipeline.Stats()
        #expect(stats.latencyPercentile(0.5) == nil)
        // 98 frames at 3.2 ms, one at 20.1 ms, one at 40 ms.
        for _ in 0..<98 { stats.count(.microseconds(3200)) }
        stats.count(.microseconds(20_100))
        stats.count(.milliseconds(40))
        stats.maximumLatency = .milliseconds(40)
        #expect(stats.latencyPercentile(0.5) == .microseconds(3500), "the upper edge of 3.2 ms's bucket")
        #expect(stats.latencyPercentile(0.98) == .microseconds(3500))
        #expect(stats.latencyPercentile(0.99) == .microseconds(20_500))
        #expect(stats.latencyPercentile(1) == .milliseconds(40))
    }

    @Test func aLatencyPastTheLastBucketIsTheMaximum() {
        var stats = DecodingPipeline.Stats()
        stats.count(.seconds(3))
        stats.maximumLatency = .seconds(3)
        #expect(stats.latencyBuckets.last == 1)
        #expect(stats.latencyPercentile(0.5) == .seconds(3))
    }
}

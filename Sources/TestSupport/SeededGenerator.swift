import Foundation

/// SplitMix64 (Steele, Lea and Flood; the constants of Vigna's reference
/// `splitmix64.c`): a seeded generator, so that a random workload or test
/// replays from its seed. The one copy for every test target and the
/// benchmark's workloads.
///
/// ```swift
/// var rng = SeededGenerator(seed: 42)
/// let n = Int.random(in: 0..<10, using: &rng)   // the same n for seed 42, on every machine
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw in [0, 1), from the top 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A standard normal draw (Box–Muller).
    public mutating func normal() -> Double {
        let u = max(unit(), 1e-12), v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}

import Foundation

/// A type stored as an LMDB key or value.
///
/// Encoding hands LMDB a borrowed buffer; decoding reads bytes that LMDB owns
/// and that live only until the transaction ends, so conformers copy what
/// they keep. Keys sort by their encoded bytes (`memcmp`), which is why
/// `UInt64` encodes big-endian.
public protocol LMDBCodable {
    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> Self
}

/// Raised when stored bytes cannot be decoded as the database's type.
public struct LMDBDecodingError: Error, CustomStringConvertible, Sendable {
    public var type: String
    public var byteCount: Int

    public init(type: String, byteCount: Int) {
        self.type = type
        self.byteCount = byteCount
    }

    public var description: String { "cannot decode \(byteCount) stored bytes as \(type)" }
}

extension UInt64: LMDBCodable {
    /// Eight bytes, big-endian, so that keys sort numerically.
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: self.bigEndian, body)
    }

    public static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        guard bytes.count == 8 else { throw LMDBDecodingError(type: "UInt64", byteCount: bytes.count) }
        return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    }
}

extension String: LMDBCodable {
    /// The string's UTF-8 bytes, without a terminator.
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    public static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

extension Array: LMDBCodable where Element == UInt8 {
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }

    public static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        [UInt8](bytes)
    }
}

extension Data: LMDBCodable {
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }

    public static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> Data {
        Data(bytes)
    }
}

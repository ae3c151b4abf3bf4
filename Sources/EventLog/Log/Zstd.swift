import CZstd
import Foundation

/// The zstd codec (the system's libzstd, `CZstd`), as the log uses it:
/// one frame a block of payload, content size in the frame header, no
/// checksum (the record's CRC-32C covers the stored bytes), and no
/// dictionary id in the frame (the record names its dictionary).
///
/// ```swift
/// let frame = try Zstd.compress(bytes, dictionary: dictionary)        // a whole zstd frame
/// try Zstd.decompress(frame, into: buffer, dictionary: dictionary)     // exactly buffer.count bytes
/// ```
///
/// Contexts (`ZSTD_CCtx`, `ZSTD_DCtx`) are pooled: any thread may call.
enum Zstd {
    /// The compression level of every payload (zstd's default).
    static let level: Int32 = 3

    /// `bytes` compressed into one frame (`ZSTD_compress2`, with the
    /// dictionary referenced by `ZSTD_CCtx_refCDict`).
    static func compress(_ bytes: UnsafeRawBufferPointer, dictionary: ZstdDictionary?) throws -> [UInt8] {
        let capacity = ZSTD_compressBound(bytes.count)
        return try compressors.with { cctx in
            try [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
                // Parameters are sticky on a context: set all of them every call.
                _ = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)
                _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
                _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)
                if let dictionary { try check(ZSTD_CCtx_refCDict(cctx, dictionary.cdict), "ZSTD_CCtx_refCDict") }
                let written = ZSTD_compress2(cctx, out.baseAddress, capacity, bytes.baseAddress, bytes.count)
                try check(written, "ZSTD_compress")
                count = written
            }
        }
    }

    /// Decompresses the one frame `frame` into `out`, which it must fill
    /// exactly (`ZSTD_decompressDCtx`, or `ZSTD_decompress_usingDDict`).
    static func decompress(_ frame: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer,
                           dictionary: ZstdDictionary?) throws {
        let written = decompressors.with { dctx in
            if let dictionary {
                return ZSTD_decompress_usingDDict(dctx, out.baseAddress, out.count, frame.baseAddress, frame.count, dictionary.ddict)
            }
            return ZSTD_decompressDCtx(dctx, out.baseAddress, out.count, frame.baseAddress, frame.count)
        }
        try check(written, "ZSTD_decompress")
        guard written == out.count else {
            throw ZstdError(call: "ZSTD_decompress", "the frame holds \(written) bytes, not the \(out.count) its record says")
        }
    }

    /// A dictionary of at most `capacity` bytes trained on `samples`
    /// (`ZDICT_trainFromBuffer`); nil when zstd finds too little to train on.
    static func train(samples: [[UInt8]], capacity: Int) -> [UInt8]? {
        let joined = samples.flatMap { $0 }
        let sizes = samples.map { $0.count }
        guard !samples.isEmpty, capacity > 0 else { return nil }
        var dictionary = [UInt8](repeating: 0, count: capacity)
        let size = joined.withUnsafeBytes { src in
            dictionary.withUnsafeMutableBytes { out in
                ZDICT_trainFromBuffer(out.baseAddress, capacity, src.baseAddress, sizes, UInt32(sizes.count))
            }
        }
        guard ZDICT_isError(size) == 0 else { return nil }
        return Array(dictionary[0..<size])
    }

    /// The raw content of a dictionary: what follows its header and entropy
    /// tables (`ZDICT_getDictHeaderSize`); nil for bytes that are not a dictionary.
    static func content(ofDictionary dictionary: [UInt8]) -> ArraySlice<UInt8>? {
        let header = dictionary.withUnsafeBytes { ZDICT_getDictHeaderSize($0.baseAddress, $0.count) }
        guard ZDICT_isError(header) == 0, header <= dictionary.count else { return nil }
        return dictionary[header...]
    }

    /// A dictionary of `content` with the entropy tables of `samples` and
    /// the id `id` in its header (`ZDICT_finalizeDictionary`); nil when zstd
    /// refuses (too little content or too few samples).
    static func finalize(content: [UInt8], samples: [[UInt8]], capacity: Int, id: UInt32) -> [UInt8]? {
        guard content.count >= 8, !samples.isEmpty else { return nil }
        let joined = samples.flatMap { $0 }
        let sizes = samples.map { $0.count }
        let room = max(capacity, content.count + 4096)
        var dictionary = [UInt8](repeating: 0, count: room)
        let parameters = ZDICT_params_t(compressionLevel: level, notificationLevel: 0, dictID: id)
        let size = joined.withUnsafeBytes { src in
            content.withUnsafeBytes { custom in
                dictionary.withUnsafeMutableBytes { out in
                    ZDICT_finalizeDictionary(out.baseAddress, room, custom.baseAddress, custom.count,
                                             src.baseAddress, sizes, UInt32(sizes.count), parameters)
                }
            }
        }
        guard ZDICT_isError(size) == 0 else { return nil }
        return Array(dictionary[0..<size])
    }

    /// The dictionary id a dictionary's header holds (`ZDICT_getDictID`); 0 when none.
    static func dictionaryID(_ dictionary: [UInt8]) -> UInt32 {
        dictionary.withUnsafeBytes { ZDICT_getDictID($0.baseAddress, $0.count) }
    }

    private static func check(_ result: Int, _ call: String) throws {
        if ZSTD_isError(result) != 0 {
            throw ZstdError(call: call, String(cString: ZSTD_getErrorName(result)))
        }
    }

    private static let compressors = ContextPool(create: { ZSTD_createCCtx() }, free: { _ = ZSTD_freeCCtx($0) })
    private static let decompressors = ContextPool(create: { ZSTD_createDCtx() }, free: { _ = ZSTD_freeDCtx($0) })
}

/// What zstd said went wrong, and in which call.
struct ZstdError: Error, CustomStringConvertible {
    let call: String
    let detail: String

    init(call: String, _ detail: String) {
        self.call = call
        self.detail = detail
    }

    var description: String { "\(call): \(detail)" }
}

/// A trained zstd dictionary, prepared for compressing (`ZSTD_CDict`) and
/// decompressing (`ZSTD_DDict`). Immutable; shared by threads.
final class ZstdDictionary: @unchecked Sendable {
    /// The id the log's records name it by (its key in `dictionaries`).
    let id: UInt32
    /// The dictionary as stored (zstd's dictionary format).
    let bytes: [UInt8]
    let cdict: OpaquePointer
    let ddict: OpaquePointer

    init(id: UInt32, bytes: [UInt8]) throws {
        self.id = id
        self.bytes = bytes
        let prepared = bytes.withUnsafeBytes { raw -> (OpaquePointer?, OpaquePointer?) in
            (ZSTD_createCDict(raw.baseAddress, raw.count, Zstd.level), ZSTD_createDDict(raw.baseAddress, raw.count))
        }
        guard let c = prepared.0, let d = prepared.1 else {
            if let c = prepared.0 { ZSTD_freeCDict(c) }
            if let d = prepared.1 { ZSTD_freeDDict(d) }
            throw ZstdError(call: "ZSTD_createDDict", "the \(bytes.count) bytes of dictionary \(id) are not a zstd dictionary")
        }
        cdict = c
        ddict = d
    }

    deinit {
        ZSTD_freeCDict(cdict)
        ZSTD_freeDDict(ddict)
    }
}

/// Reusable zstd contexts: one is taken for a call and given back after.
private final class ContextPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [OpaquePointer] = []
    private let create: () -> OpaquePointer?
    private let free: (OpaquePointer) -> Void

    init(create: @escaping () -> OpaquePointer?, free: @escaping (OpaquePointer) -> Void) {
        self.create = create
        self.free = free
    }

    func with<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        let context = lock.withLock { idle.popLast() } ?? create()
        guard let context else { preconditionFailure("zstd could not allocate a context (out of memory)") }
        defer {
            lock.withLock {
                if idle.count < 8 { idle.append(context) } else { free(context) }
            }
        }
        return try body(context)
    }
}

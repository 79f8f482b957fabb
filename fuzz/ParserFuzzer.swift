// libFuzzer entry point for FerryHTTP's request parser. scripts/fuzz-parser.sh builds it together
// with the parser's sources (Sources/FerryHTTP/Parsing) into one binary with -sanitize=fuzzer,address.
//
// Each input is parsed twice by fresh parsers: once handed over whole, once in pieces whose size
// comes from the input's first byte (so a header split across reads, or a chunk size split from its
// data, is exercised). Findings: a crash or sanitizer report; a parser that produces events without
// consuming input; and the two parses disagreeing about the requests they saw or about whether the
// input was rejected (how bytes arrive must not change what they mean).
//
// The same input is also read as a client's WebSocket frames (`WebSocketFrameParser`, built in from
// Sources/FerryHTTP/WebSocket), whole and in pieces, under a 4 KiB message limit: the two must see the same
// messages and the same close code.

func parse(_ bytes: ArraySlice<UInt8>, step: Int) -> (events: [RequestParser.Event], failed: Bool) {
    var parser = RequestParser(limits: RequestLimits(), maxBodySize: 64 * 1024)
    var events: [RequestParser.Event] = []
    var offset = bytes.startIndex
    while offset < bytes.endIndex {
        let end = min(bytes.endIndex, offset + step)
        parser.append(Array(bytes[offset..<end]))
        offset = end
        while let event = parser.next() {
            if case .error = event { return (events, true) }
            events.append(event)
            precondition(events.count < 4 * bytes.count + 16, "the parser produced events without consuming input")
        }
    }
    return (events, false)
}

func frames(_ bytes: ArraySlice<UInt8>, step: Int) -> [WebSocketFrameParser.Event] {
    var parser = WebSocketFrameParser(maxMessageSize: 4096)
    var events: [WebSocketFrameParser.Event] = []
    var offset = bytes.startIndex
    while offset < bytes.endIndex {
        let end = min(bytes.endIndex, offset + step)
        parser.append(bytes[offset..<end])
        offset = end
        while let event = parser.next() {
            events.append(event)
            precondition(events.count < 4 * bytes.count + 16, "the frame parser produced events without consuming input")
            if case .error = event { return events }
        }
    }
    return events
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let input = bytes[1...]
    let whole = parse(input, step: input.count)
    let pieces = parse(input, step: Int(bytes[0] % 64) + 1)
    precondition(whole.failed == pieces.failed, "rejection depends on how the bytes arrived")
    precondition(whole.events == pieces.events, "the requests seen depend on how the bytes arrived")
    precondition(frames(input, step: input.count) == frames(input, step: Int(bytes[0] % 64) + 1),
                 "the WebSocket messages seen depend on how the bytes arrived")
    return 0
}

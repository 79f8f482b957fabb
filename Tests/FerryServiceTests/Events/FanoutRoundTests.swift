import FerryHTTP
import Testing
@testable import FerryService

@Suite struct FanoutRoundTests {
    private final class Target {}
    private func chunk(_ text: String) -> SharedChunk { SharedChunk(Array(text.utf8)) }
    private func texts(_ delivery: FanoutRound<Target>.Delivery) -> [String] {
        delivery.chunks.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    @Test func piledUpSendsBecomeOneDeliveryPerTargetWithItsChunksInOrder() {
        let (a, b, c) = (Target(), Target(), Target())
        var round = FanoutRound<Target>()
        round.add([chunk("1")], to: [a, b])
        round.add([chunk("2"), chunk("3")], to: [c])
        round.add([chunk("4")], to: [b, c, a])
        #expect(round.deliveries.map { ObjectIdentifier($0.target) } == [a, b, c].map { ObjectIdentifier($0) })
        #expect(round.deliveries.map(texts) == [["1", "4"], ["1", "4"], ["2", "3", "4"]])
    }

    @Test func aFinishComesAfterWhatWasSentBeforeAndNothingFollowsIt() {
        let (a, b) = (Target(), Target())
        var round = FanoutRound<Target>()
        round.add([chunk("1")], to: [a, b])
        round.finish(a) {}
        round.add([chunk("2")], to: [a, b])
        #expect(round.deliveries.map(texts) == [["1"], ["1", "2"]])
        #expect(round.deliveries.map { $0.finish != nil } == [true, false])
    }

    @Test func aRoundStartsAtTheRotationModuloTheCount() {
        #expect(EventFanout.start(count: 0, rotation: 5) == 0)
        #expect(EventFanout.start(count: 4, rotation: 6) == 2)
        #expect(EventFanout.start(count: 4, rotation: -1) == 3)
        #expect(EventFanout.start(count: 3, rotation: Int.max) == Int.max % 3)
    }
}

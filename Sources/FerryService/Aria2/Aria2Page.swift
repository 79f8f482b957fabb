/// aria2's pagination for `tellWaiting` and `tellStopped` (`getPaginationRange` in aria2 1.36): a non-negative
/// `offset` counts from the start; a negative one counts from the end (-1 is the last item), takes `num` items
/// ending there, and the answer lists them from that item backwards. Pure.
struct Aria2Page: Equatable {
    /// The slice of the list to answer.
    let range: Range<Int>
    /// Whether to answer it last item first (a negative offset).
    let reversed: Bool

    init(offset: Int64, num: Int64, count: Int) {
        reversed = offset < 0
        let size = Int64(count)
        var offset = offset
        var num = num
        if offset < 0 {
            let end = offset + size
            guard end >= 0 else {
                range = count..<count
                return
            }
            offset = end - (num - 1)
            if offset < 0 {
                offset = 0
                num = end + 1
            }
        } else if size <= offset {
            range = count..<count
            return
        }
        let last = min(size, offset + num)
        range = Int(offset)..<Int(max(offset, last))
    }

    /// The positions in the list of the items this page answers, in the order they are answered.
    var positions: [Int] { reversed ? range.reversed() : Array(range) }

    /// The items of `list` this page answers, in the order they are answered.
    func select<T>(_ list: [T]) -> [T] { positions.map { list[$0] } }
}

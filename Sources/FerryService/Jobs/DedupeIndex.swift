/// Job ids by dedupe key, for finding an identical job when a new one is submitted.
///
/// Pure value; the supervisor owns the one instance and changes it with its job table. Most keys
/// belong to one job, so a key with a single id holds it inline: no set per job (with 100,000
/// distinct URLs that is 100,000 allocations saved). Keys are kept as given; `sharedKey` hands back
/// the indexed instance so that new jobs with the same key share its storage.
struct DedupeIndex {
    private enum IDs {
        case one(String)
        case many(Set<String>)
    }

    private var byKey: [String: IDs] = [:]

    /// Number of distinct keys.
    var count: Int { byKey.count }

    /// The ids indexed under `key`, in no particular order.
    func ids(forKey key: String) -> [String] {
        switch byKey[key] {
        case nil: []
        case .one(let id): [id]
        case .many(let ids): Array(ids)
        }
    }

    /// `key`, or the equal key already indexed (sharing its storage).
    func sharedKey(_ key: String) -> String {
        guard let index = byKey.index(forKey: key) else { return key }
        return byKey.keys[index]
    }

    /// Indexes `id` under `key` (again is a no-op).
    mutating func insert(_ id: String, key: String) {
        guard let index = byKey.index(forKey: key) else {
            byKey[key] = .one(id)
            return
        }
        switch byKey.values[index] {
        case .one(let existing) where existing == id:
            return
        case .one(let existing):
            byKey.values[index] = .many([existing, id])
        case .many(var ids):
            // Drop the dictionary's reference first, so the set is unique and grows in place.
            byKey.values[index] = .one(id)
            ids.insert(id)
            byKey.values[index] = .many(ids)
        }
    }

    /// Removes `id` from `key`; a key left with no id is dropped.
    mutating func remove(_ id: String, key: String) {
        guard let index = byKey.index(forKey: key) else { return }
        switch byKey.values[index] {
        case .one(let existing):
            if existing == id { byKey.remove(at: index) }
        case .many(var ids):
            byKey.values[index] = .one(id)
            ids.remove(id)
            if ids.count > 1 {
                byKey.values[index] = .many(ids)
            } else if let last = ids.first {
                byKey.values[index] = .one(last)
            } else {
                byKey.remove(at: index)
            }
        }
    }
}

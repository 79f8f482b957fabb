@testable import FerryEngine
import Testing

@Suite("FilenameReservations")
struct FilenameReservationsTests {
    @Test func aNameHeldOrInFilesGoesToTheNextVariant() {
        let names = FilenameReservations()
        var files: Set<String> = ["a.iso"]
        let inFiles: (String) -> Bool = { files.contains($0) }
        #expect(names.reserve("a.iso", for: "j1", inFiles: inFiles) == "a (1).iso")
        #expect(names.reserve("a.iso", for: "j2", inFiles: inFiles) == "a (2).iso")
        #expect(names.reserve("b.iso", for: "j3", inFiles: inFiles) == "b.iso")
        #expect(names.name(of: "j1") == "a (1).iso")
        // Asked again for the name it holds, a job keeps it, even once a file has it.
        files.insert("b.iso")
        #expect(names.reserve("b.iso", for: "j3", inFiles: inFiles) == "b.iso")
        // A released name is free again.
        names.assign(nil, to: "j2")
        #expect(names.name(of: "j2") == nil)
        #expect(names.reserve("a.iso", for: "j4", inFiles: inFiles) == "a (2).iso")
    }

    @Test func anUnsharedNameIsCheckedEvenWhenTheJobHoldsIt() {
        let names = FilenameReservations()
        names.assign("c.bin", to: "j1")
        names.assign("c.bin", to: "j2")  // two jobs claimed at start-up
        #expect(names.reserveUnshared("c.bin", for: "j1", inFiles: { _ in false }, ownFile: { _ in false }) == "c (1).bin")
        #expect(names.reserveUnshared("c.bin", for: "j2", inFiles: { _ in false }, ownFile: { _ in false }) == "c.bin")
        // A file of the name is kept only when it is the job's own.
        #expect(names.reserveUnshared("d.bin", for: "j3", inFiles: { $0 == "d.bin" }, ownFile: { _ in true }) == "d.bin")
        #expect(names.reserveUnshared("e.bin", for: "j4", inFiles: { $0 == "e.bin" }, ownFile: { _ in false }) == "e (1).bin")
    }

    /// Many jobs of one name: each probe starts after the variants already given (not at the name itself), and a
    /// variant its job releases is given again first; a file that appeared meanwhile is still never overwritten.
    @Test func manyJobsOfOneNameProbeFromTheLastVariantGivenAndReuseReleasedOnes() {
        let names = FilenameReservations()
        var checked: [String] = []
        var files: Set<String> = []
        let inFiles: (String) -> Bool = { name in checked.append(name); return files.contains(name) }
        for n in 0..<100 { _ = names.reserve("index.html", for: "j\(n)", inFiles: inFiles) }
        #expect(names.name(of: "j99") == "index (99).html")
        checked = []
        #expect(names.reserve("index.html", for: "j100", inFiles: inFiles) == "index (100).html")
        #expect(checked == ["index (100).html"], "one file check, not 101")
        names.assign(nil, to: "j7")
        names.assign(nil, to: "j3")
        #expect(names.reserve("index.html", for: "j101", inFiles: inFiles) == "index (3).html")
        files.insert("index (7).html")   // a file of the next free variant appeared: skipped, not overwritten
        // (the probe starts after 3, the variant just given: 4, 5, 6 held, 7 a file, 8 to 100 held)
        #expect(names.reserve("index.html", for: "j102", inFiles: inFiles) == "index (101).html")
        // Every job released: the probe starts at the name itself again.
        for n in 0...102 { names.assign(nil, to: "j\(n)") }
        files = []
        #expect(names.reserve("index.html", for: "k", inFiles: inFiles) == "index.html")
    }
}

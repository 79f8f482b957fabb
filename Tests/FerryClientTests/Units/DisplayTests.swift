import FerryCore
@testable import FerryClient
import Testing

@Suite("What the client shows")
struct DisplayTests {
    static func running() -> Job {
        Job(id: "j1", url: "http://o/movie.mkv", state: .downloading, filename: "movie.mkv", bytesReceived: 5_452_595,
            bytesExpected: 10_485_760, progress: 0.52, speed: 1_258_291, eta: 4.2)
    }

    @Test func plainLinesSayEverythingOnOneLine() {
        #expect(JobCells(Self.running()).plainLine
            == "j1  downloading  52%  5.2 MiB/10.0 MiB  1.2 MiB/s  ETA 5s  movie.mkv")
        let failed = Job(id: "j2", url: "http://o/x", state: .failed, filename: "x", error:
            JobFailure(code: .httpError, message: "the origin answered 404", httpStatus: 404))
        #expect(JobCells(failed).plainLine == "j2  failed  --  0 B  x  http_error: the origin answered 404")
        let finished = Job(id: "j3", url: "http://o/y", state: .finished, filename: "y", bytesReceived: 2048,
                           bytesExpected: 2048, progress: 1)
        #expect(JobCells(finished).plainLine == "j3  finished  100%  2.0 KiB  y")
        let retrying = Job(id: "j4", url: "http://o/z", state: .waiting, error: JobFailure(code: .retrying, message: "again at 12:00"))
        #expect(JobCells(retrying).state == "waiting (retrying)")
        #expect(JobCells(retrying).name == "z", "no filename yet: the URL's last segment")
    }

    @Test func progressLinesFitTheTerminal() {
        let lines = ProgressLines(width: 80, style: .blocks).render([Self.running()])
        #expect(lines.count == 1)
        #expect(TerminalText.width(lines[0]) <= 80)
        #expect(lines[0].hasPrefix("movie.mkv "))
        #expect(lines[0].contains("▕"))
        #expect(lines[0].hasSuffix(" 52%  5.2 MiB/10.0 MiB  1.2 MiB/s  ETA 5s"))
        let narrow = ProgressLines(width: 40, style: .ascii).render([Self.running()])
        #expect(TerminalText.width(narrow[0]) <= 40)
        #expect(!narrow[0].contains("["), "no room left for a bar")
    }

    @Test func tablesAlignColumnsAndCutTheNameToTheWidth() {
        var long = Self.running()
        long.id = "j9"
        long.filename = String(repeating: "n", count: 200)
        let paused = Job(id: "j2", url: "http://o/p", state: .paused, filename: "p.bin", bytesReceived: 100, bytesExpected: 400)
        let lines = JobTable(width: 100).render([Self.running(), paused, long])
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("ID  STATE"))
        #expect(lines.allSatisfy { TerminalText.width($0) <= 100 })
        #expect(lines[3].hasSuffix("…"))
        #expect(lines[1].dropFirst(4).hasPrefix("downloading"))
        #expect(lines[2].dropFirst(4).hasPrefix("paused"))
        let unbounded = JobTable().render([long])
        #expect(unbounded[1].hasSuffix(String(repeating: "n", count: 200)))
    }

    @Test func speedAndTimeLeftColumnsOnlyWhileSomethingDownloads() {
        let idle = Job(id: "j2", url: "http://o/p", state: .paused, filename: "p.bin")
        #expect(JobTable().render([idle])[0] == "ID  STATE   DONE  SIZE  NAME")
        #expect(JobTable().render([Self.running()])[0].contains("SPEED  ETA"))
    }

    @Test func watchScreenPutsTheBusiestFirstAndFitsTheHeight() {
        var jobs: [Job] = []
        for index in 0..<10 {
            jobs.append(Job(id: "f\(index)", url: "http://o/\(index)", state: .finished, filename: "\(index)"))
        }
        jobs.append(Self.running())
        let screen = WatchScreen(title: "Ferry http://h:1", width: 100, height: 8, style: .blocks).render(jobs)
        #expect(screen.count == 8)
        #expect(screen[0].hasPrefix("Ferry http://h:1  ·  11 jobs  ·  1 downloading at 1.2 MiB/s"))
        #expect(screen[1].hasPrefix("ID"))
        #expect(screen[2].hasPrefix("j1"))
        #expect(screen.last == "… 6 more")
    }

    @Test func detailsLeaveOutWhatIsNotThere() {
        var job = Self.running()
        job.createdAt = "2026-01-01T00:00:00Z"
        let lines = JobDetails.lines(job)
        #expect(lines.first == "id:        j1")
        #expect(lines.contains("speed:     1.2 MiB/s"))
        #expect(lines.contains("time left: 5s"))
        #expect(lines.contains("created:   2026-01-01T00:00:00Z"))
        #expect(!lines.contains { $0.hasPrefix("sha256") })
    }

    @Test func barStyleFollowsTheLocale() {
        #expect(Console.barStyle(environment: [:]) == .blocks)
        #expect(Console.barStyle(environment: ["LANG": "en_US.UTF-8"]) == .blocks)
        #expect(Console.barStyle(environment: ["LC_ALL": "C", "LANG": "en_US.UTF-8"]) == .ascii)
        #expect(Console.barStyle(environment: ["LC_CTYPE": "de_DE.utf8"]) == .blocks)
    }
}

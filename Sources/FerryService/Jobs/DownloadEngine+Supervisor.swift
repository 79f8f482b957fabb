import FerryEngine

/// The real transfers and files the supervisor drives (its tests use `FakeEngine`).
extension DownloadEngine: TransferControl, JobFiles {}

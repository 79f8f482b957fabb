// FerryCore: see docs/ARCHITECTURE.md.

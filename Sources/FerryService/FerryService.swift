// FerryService: see docs/ARCHITECTURE.md.

// FerryHTTP: see docs/ARCHITECTURE.md.

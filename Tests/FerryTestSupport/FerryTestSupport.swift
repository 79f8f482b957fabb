// FerryTestSupport: real origins for tests (nginx, the fault origin), started and stopped by pid.

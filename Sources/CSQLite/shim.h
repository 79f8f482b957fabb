// SQLite, with wrappers for the macros Swift cannot import (SQLITE_TRANSIENT is a cast).
#ifndef FERRY_CSQLITE_SHIM_H
#define FERRY_CSQLITE_SHIM_H
#include <sqlite3.h>

static inline int ferry_sqlite3_bind_text(sqlite3_stmt *s, int i, const char *text, int n) {
    return sqlite3_bind_text(s, i, text, n, SQLITE_TRANSIENT);
}
static inline int ferry_sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *data, int n) {
    return sqlite3_bind_blob(s, i, data, n, SQLITE_TRANSIENT);
}
#endif

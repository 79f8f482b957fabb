// libpq, PostgreSQL's C client library (Debian's libpq-dev). Its calls are not variadic, so Swift calls them
// directly; this header only brings them in.
#ifndef FERRY_CPOSTGRES_SHIM_H
#define FERRY_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif

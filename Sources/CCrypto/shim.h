// OpenSSL's libcrypto: the EVP digest interface Ferry uses for SHA-256.
#ifndef FERRY_CCRYPTO_SHIM_H
#define FERRY_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#endif

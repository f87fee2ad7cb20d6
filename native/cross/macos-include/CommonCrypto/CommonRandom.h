/* The part of Apple's <CommonCrypto/CommonRandom.h> that mimalloc's C uses: see CommonCryptoError.h beside it. */
#ifndef RUSTYJSON_COMMON_RANDOM_H
#define RUSTYJSON_COMMON_RANDOM_H
#include <stddef.h>
#include <CommonCrypto/CommonCryptoError.h>
typedef CCCryptorStatus CCRNGStatus;
CCRNGStatus CCRandomGenerateBytes(void *bytes, size_t count);
#endif

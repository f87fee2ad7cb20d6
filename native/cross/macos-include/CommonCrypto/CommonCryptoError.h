/* The part of Apple's <CommonCrypto/CommonCryptoError.h> that mimalloc's C uses (its random source on macOS
 * 10.15 and later). zig ships macOS's libc headers but not these; the function itself is in libSystem (through
 * /usr/lib/system/libcommonCrypto.dylib), which zig's libSystem stub lists. Used only when cross-building for macOS
 * (scripts/precompile passes this directory with -idirafter, so real headers win where they exist). */
#ifndef RUSTYJSON_COMMON_CRYPTO_ERROR_H
#define RUSTYJSON_COMMON_CRYPTO_ERROR_H
#include <stdint.h>
enum { kCCSuccess = 0 };
typedef int32_t CCStatus;
typedef int32_t CCCryptorStatus;
#endif

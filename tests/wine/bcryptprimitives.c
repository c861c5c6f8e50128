/*
 * bcryptprimitives.dll for wine 8, which lacks it: Rust's standard library (since 1.78) takes
 * its random bytes from ProcessPrng in this DLL, present on every Windows 10 and later. The
 * Windows test (tests/tests/cross_targets.rs) builds it with mingw-w64 and puts it beside the
 * unpacked binary; the released artifacts do not carry it. ProcessPrng, as Windows documents
 * it: fills the buffer, always returns TRUE; here from RtlGenRandom (advapi32's
 * SystemFunction036), which takes at most a ULONG at a time.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (!SystemFunction036(data, chunk)) {
      return FALSE;
    }
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}

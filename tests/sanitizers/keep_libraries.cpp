// keep_libraries.cpp — preloaded (after the ASan runtime) into the Vulkan
// tests, the Vulkan `ferrum run` tests and the Vulkan examples of the asan
// preset: dlclose does nothing, so every library the Vulkan loader opens
// (the lavapipe driver, its LLVM, the validation layer) stays mapped until
// the process exits. LeakSanitizer runs at exit; a library unloaded before
// then leaves its leaks as "<unknown module>" frames, which no suppression
// can name, so without this the leak check had to be off for these
// processes — and ferrum's own host allocations went unchecked with it.
// Kept mapped, the libraries' own leaks are suppressed by library
// (tests/sanitizers/lsan.supp) and everything else is checked. Tests only:
// nothing of ferrum links this.
extern "C" int dlclose(void* handle) noexcept {
  (void)handle;
  return 0;
}

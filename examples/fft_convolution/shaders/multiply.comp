#version 450
// fft_convolution's middle pass: each complex value of the spectra times the
// kernel's spectrum at its frequency. Primary: the spectra, batch x points
// complex f32 (real, imaginary), read and written in place; secondary: the
// kernel's spectrum, `points` complex f32; user[0]: points. The host does
// the same in fft_reference.cpp (with FFTW's spectra) to check the result.
#define USER_WORDS 1
#include "kernel_abi.glsl"

void main() {
  const uint base = primary_base();
  const uint kernel_base = pc.secondary_offset / 4u;
  const uint points = pc.user[0];
  const uint count = primary_words() / 2u;
  for (uint p = gl_GlobalInvocationID.x; p < count; p += grid_stride()) {
    const uint k = p % points;
    const vec2 x = vec2(uintBitsToFloat(primary.words[base + 2u * p]), uintBitsToFloat(primary.words[base + 2u * p + 1u]));
    const vec2 h = vec2(uintBitsToFloat(secondary.words[kernel_base + 2u * k]),
                        uintBitsToFloat(secondary.words[kernel_base + 2u * k + 1u]));
    primary.words[base + 2u * p] = floatBitsToUint(x.x * h.x - x.y * h.y);
    primary.words[base + 2u * p + 1u] = floatBitsToUint(x.x * h.y + x.y * h.x);
  }
}

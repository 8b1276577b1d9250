//! Run-time choice of the vector instruction set for the hot loops.
//!
//! `isa_versions!` turns an `#[inline(always)]` function into one compiled three times —
//! AVX-512, AVX2 with FMA, and the baseline — and called in the widest version the CPU has.
//! The versions compute the same bits: Rust never fuses a multiplication and an addition on
//! its own, and the loops' orders of operations do not depend on the vector width.

/// `isa_versions!(pub(crate) fn name<T: Bound>(a: A, b: B) -> R => body);` defines `name`,
/// which calls `body` (an `#[inline(always)]` function with the same parameters) compiled for
/// the widest instruction set available at run time; `isa_versions!(pub(crate) fn name<T:
/// Bound>(a: A, b: B) -> R { ... })` does the same with the body written in place.
macro_rules! isa_versions {
    ($(#[$m:meta])* $vis:vis fn $name:ident<$T:ident: $bound:path>($($a:ident: $t:ty),* $(,)?) -> $r:ty => $body:path;) => {
        $(#[$m])*
        $vis fn $name<$T: $bound>($($a: $t),*) -> $r {
            isa_versions!(@call $body, $T: $bound, ($($a: $t),*) -> $r)
        }
    };
    ($(#[$m:meta])* $vis:vis fn $name:ident<$T:ident: $bound:path>($($a:ident: $t:ty),* $(,)?) -> $r:ty $block:block) => {
        $(#[$m])*
        $vis fn $name<$T: $bound>($($a: $t),*) -> $r {
            // The body, inlined into every version.
            #[inline(always)]
            fn body<$T: $bound>($($a: $t),*) -> $r $block
            isa_versions!(@call body, $T: $bound, ($($a: $t),*) -> $r)
        }
    };
    (@call $body:path, $T:ident: $bound:path, ($($a:ident: $t:ty),*) -> $r:ty) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
            unsafe fn v4<$T: $bound>($($a: $t),*) -> $r {
                $body($($a),*)
            }
            #[target_feature(enable = "avx2,fma")]
            unsafe fn v3<$T: $bound>($($a: $t),*) -> $r {
                $body($($a),*)
            }
            if $crate::isa::has_avx512() {
                // SAFETY: the CPU has every feature v4 is compiled for (checked just above).
                return unsafe { v4($($a),*) };
            }
            if $crate::isa::has_avx2() {
                // SAFETY: the CPU has AVX2 and FMA (checked just above).
                return unsafe { v3($($a),*) };
            }
        }
        $body($($a),*)
    }};
}

/// Whether the CPU has the AVX-512 subsets the hot loops are compiled for.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx512() -> bool {
    gpu_runtime::cpu::has_avx512()
}

/// Whether the CPU has the AVX-512 subsets the hot loops are compiled for (never, off x86-64).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(crate) fn has_avx512() -> bool {
    false
}

/// Whether the CPU has AVX-512 BF16 beside [`has_avx512`] (and it is not switched off).
#[inline]
pub(crate) fn has_bf16() -> bool {
    gpu_runtime::cpu::has_avx512_bf16()
}

/// Whether the CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    gpu_runtime::cpu::has_avx2()
}

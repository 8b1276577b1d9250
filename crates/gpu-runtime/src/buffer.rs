//! Device memory as warpath's users see it: [`DeviceBuffer`] and its views, typed by a
//! [`DeviceScalar`]. No cudarc type appears in these signatures; the driver handle stays inside.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut};

/// A plain value that can live in device memory and cross the host/device boundary as bytes:
/// the element type of a [`DeviceBuffer`] and of a kernel's scalar arguments.
///
/// # Safety
/// The type has no padding and no pointers, every bit pattern a kernel writes is a valid value
/// (for `bool`: warpath's kernels write only 0 and 1), and all-zero bytes are a valid value.
/// A `#[repr(C)]` struct of such fields that mirrors a CUDA struct qualifies.
pub unsafe trait DeviceScalar: Copy + Send + Sync + 'static {}

macro_rules! device_scalars {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numbers: no padding, every bit pattern valid, zero valid.
        unsafe impl DeviceScalar for $t {}
    )* };
}
device_scalars!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
// SAFETY: one byte; kernels write only 0 and 1 to bool buffers (see the trait's contract).
unsafe impl DeviceScalar for bool {}

/// Reinterpretation needs element types of the same size (a programming error otherwise; the
/// check folds away once the types are known).
fn same_size<T, U>() {
    assert_eq!(
        size_of::<T>(),
        size_of::<U>(),
        "reinterpreting a device buffer of {} as {}",
        std::any::type_name::<T>(),
        std::any::type_name::<U>()
    );
}

/// `len` elements of `T` in device memory, owned. Created by [`Gpu::upload`](crate::Gpu::upload),
/// [`Gpu::alloc_zeros`](crate::Gpu::alloc_zeros) or a warpath function that returns device
/// data; freed (in stream order) when dropped.
///
/// # Examples
/// ```
/// if let Ok(gpu) = gpu_runtime::gpu() {
///     let buf = gpu.upload(&[1u32, 2, 3]).unwrap();
///     assert_eq!(buf.len(), 3);
///     assert_eq!(gpu.download(&buf.slice(1..)).unwrap(), vec![2, 3]);
/// }
/// ```
pub struct DeviceBuffer<T> {
    /// `None` only for an empty buffer made without an allocation (address 0).
    pub(crate) raw: Option<CudaSlice<u8>>,
    len: usize,
    _t: PhantomData<T>,
}

/// A borrowed, read-only range of a [`DeviceBuffer`].
pub struct DeviceView<'a, T> {
    pub(crate) raw: Option<CudaView<'a, u8>>,
    len: usize,
    _t: PhantomData<T>,
}

/// A borrowed, writable range of a [`DeviceBuffer`].
pub struct DeviceViewMut<'a, T> {
    pub(crate) raw: Option<CudaViewMut<'a, u8>>,
    len: usize,
    _t: PhantomData<T>,
}

impl<T> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .finish()
    }
}

fn byte_range<T>(range: impl RangeBounds<usize>, len: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e + 1,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end && end <= len,
        "device range {start}..{end} out of bounds for a buffer of {len} elements"
    );
    (start * size_of::<T>(), end * size_of::<T>())
}

impl<T: DeviceScalar> DeviceBuffer<T> {
    pub(crate) fn from_raw(raw: Option<CudaSlice<u8>>, len: usize) -> Self {
        debug_assert_eq!(raw.as_ref().map_or(0, |r| r.len()), len * size_of::<T>());
        DeviceBuffer {
            raw,
            len,
            _t: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A read-only view of the elements in `range`.
    ///
    /// # Panics
    /// When `range` is not within `0..len()` (a programming error, as for slices).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'_, T> {
        let (a, b) = byte_range::<T>(range, self.len);
        DeviceView {
            raw: self.raw.as_ref().map(|r| r.slice(a..b)),
            len: (b - a) / size_of::<T>().max(1),
            _t: PhantomData,
        }
    }

    /// A writable view of the elements in `range`.
    ///
    /// # Panics
    /// When `range` is not within `0..len()`.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> DeviceViewMut<'_, T> {
        let (a, b) = byte_range::<T>(range, self.len);
        DeviceViewMut {
            raw: self.raw.as_mut().map(|r| r.slice_mut(a..b)),
            len: (b - a) / size_of::<T>().max(1),
            _t: PhantomData,
        }
    }

    /// The same device memory as elements of `U`, a type of the same size: e.g. `f32` keys as
    /// their `u32` bits for a radix pass.
    ///
    /// # Panics
    /// When `T` and `U` differ in size (a programming error).
    pub fn reinterpret<U: DeviceScalar>(self) -> DeviceBuffer<U> {
        same_size::<T, U>();
        DeviceBuffer {
            raw: self.raw,
            len: self.len,
            _t: PhantomData,
        }
    }

    /// A read-only view of the whole buffer as elements of `U` (same size as `T`).
    ///
    /// # Panics
    /// When `T` and `U` differ in size (a programming error).
    pub fn view_as<U: DeviceScalar>(&self) -> DeviceView<'_, U> {
        same_size::<T, U>();
        DeviceView {
            raw: self.raw.as_ref().map(|r| r.slice(..)),
            len: self.len,
            _t: PhantomData,
        }
    }

    /// A writable view of the whole buffer as elements of `U` (same size as `T`).
    ///
    /// # Panics
    /// When `T` and `U` differ in size (a programming error).
    pub fn view_as_mut<U: DeviceScalar>(&mut self) -> DeviceViewMut<'_, U> {
        same_size::<T, U>();
        DeviceViewMut {
            raw: self.raw.as_mut().map(|r| r.slice_mut(..)),
            len: self.len,
            _t: PhantomData,
        }
    }
}

/// Device memory a kernel or a copy may read: a [`DeviceBuffer`] or a view of one.
pub trait DeviceSource<T: DeviceScalar> {
    /// A read-only view of all of it.
    fn view(&self) -> DeviceView<'_, T>;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether it holds no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Device memory a kernel or a copy may write: a [`DeviceBuffer`] or a writable view of one.
pub trait DeviceSink<T: DeviceScalar>: DeviceSource<T> {
    /// A writable view of all of it.
    fn view_mut(&mut self) -> DeviceViewMut<'_, T>;
}

impl<T: DeviceScalar> DeviceSource<T> for DeviceBuffer<T> {
    fn view(&self) -> DeviceView<'_, T> {
        self.slice(..)
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl<T: DeviceScalar> DeviceSink<T> for DeviceBuffer<T> {
    fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.slice_mut(..)
    }
}

/// Both views are sources: a re-borrow of all their elements.
macro_rules! view_source {
    ($view:ident) => {
        impl<T: DeviceScalar> DeviceSource<T> for $view<'_, T> {
            fn view(&self) -> DeviceView<'_, T> {
                DeviceView {
                    raw: self.raw.as_ref().map(|r| r.slice(..)),
                    len: self.len,
                    _t: PhantomData,
                }
            }
            fn len(&self) -> usize {
                self.len
            }
        }
    };
}
view_source!(DeviceView);
view_source!(DeviceViewMut);

impl<T: DeviceScalar> DeviceSink<T> for DeviceViewMut<'_, T> {
    fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut {
            raw: self.raw.as_mut().map(|r| r.slice_mut(..)),
            len: self.len,
            _t: PhantomData,
        }
    }
}

impl<T: DeviceScalar> DeviceView<'_, T> {
    /// The device address of the first element (0 for an empty buffer from
    /// [`Gpu::empty`](crate::Gpu::empty), which kernels read as "no buffer").
    pub(crate) fn address(&self, stream: &Arc<CudaStream>) -> u64 {
        self.raw.as_ref().map_or(0, |r| r.device_ptr(stream).0)
    }
}

impl<T: DeviceScalar> DeviceViewMut<'_, T> {
    /// The device address of the first element (0 for an empty buffer), for writing.
    pub(crate) fn address(&mut self, stream: &Arc<CudaStream>) -> u64 {
        self.raw.as_mut().map_or(0, |r| r.device_ptr_mut(stream).0)
    }
}

/// Reinterprets host elements as bytes.
pub(crate) fn bytes_of<T: DeviceScalar>(s: &[T]) -> &[u8] {
    // SAFETY: DeviceScalar types have no padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Reinterprets host elements as writable bytes.
pub(crate) fn bytes_of_mut<T: DeviceScalar>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: no padding, and any bytes the device writes form a valid `T` (the trait's
    // contract).
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

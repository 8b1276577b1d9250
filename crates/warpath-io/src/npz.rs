//! `.npz` archives (NumPy's `np.savez` / `np.savez_compressed`, scipy's `save_npz`): a zip
//! archive of `.npy` files, stored or deflated, read through the `zip` crate. Each member is
//! read by name and parsed by [`crate::npy`].

use std::io::{Cursor, Read};

use crate::npy::{self, NpyArray};
use crate::{Element, IoError};

fn npz_err(message: impl Into<String>) -> IoError {
    IoError::Npy {
        path: None,
        message: message.into(),
    }
}

/// Whether `bytes` start like a zip archive (an `.npz` file).
///
/// ```
/// assert!(warpath_io::npz::is_zip(b"PK\x03\x04..."));
/// assert!(!warpath_io::npz::is_zip(b"\x93NUMPY"));
/// ```
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06")
}

/// An open `.npz` archive in memory: its members are `.npy` arrays read by name (`data` or
/// `data.npy`).
pub struct Npz<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
}

impl std::fmt::Debug for Npz<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Npz")
            .field("members", &self.archive.len())
            .finish()
    }
}

impl<'a> Npz<'a> {
    /// Opens the archive held in `bytes` (its central directory is read; no member yet).
    ///
    /// # Errors
    /// [`IoError::Npy`] when the bytes are not a readable zip archive (the `zip` crate's
    /// reason in the message).
    ///
    /// # Examples
    /// ```
    /// assert!(warpath_io::npz::Npz::new(b"PK\x03\x04 not really").is_err());
    /// ```
    pub fn new(bytes: &'a [u8]) -> Result<Self, IoError> {
        let archive = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| npz_err(format!("not a readable .npz (zip) archive: {e}")))?;
        Ok(Npz { archive })
    }

    /// The members' names, as stored (`data.npy`, ...).
    pub fn names(&self) -> Vec<String> {
        self.archive
            .file_names_raw()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect()
    }

    /// The bytes of member `name` (`name.npy` is tried when `name` has no such member).
    ///
    /// # Errors
    /// [`IoError::Npy`] naming the member when it is absent, does not inflate, fails its
    /// checksum, is larger than it declares, or would not fit in the memory available.
    pub fn member(&mut self, name: &str) -> Result<Vec<u8>, IoError> {
        let stored = if self.archive.index_for_name(name).is_some() {
            name.to_owned()
        } else {
            format!("{name}.npy")
        };
        let mut f = self.archive.by_name(&stored).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => {
                npz_err(format!("the archive has no member {stored}"))
            }
            e => npz_err(format!("member {stored}: {e}")),
        })?;
        let declared = f.size();
        crate::limits::check_claim(&format!("member {stored}"), declared, 1.0, "bytes")?;
        let mut out = Vec::with_capacity(declared as usize);
        (&mut f)
            .take(declared.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| npz_err(format!("member {stored} does not read: {e}")))?;
        if out.len() as u64 != declared {
            return Err(npz_err(format!(
                "member {stored} holds {} bytes, its entry says {declared}",
                out.len()
            )));
        }
        Ok(out)
    }

    /// Member `name` as an array of `T` ([`npy::read_npy_bytes`]).
    ///
    /// # Errors
    /// As [`Npz::member`] and [`npy::read_npy_bytes`], the message starting with the member.
    pub fn array<T: Element>(&mut self, name: &str) -> Result<NpyArray<T>, IoError> {
        let bytes = self.member(name)?;
        npy::read_npy_bytes::<T>(&bytes).map_err(|e| in_member(e, name))
    }

    /// The dtype of member `name` ([`npy::parse_header`]).
    ///
    /// # Errors
    /// As [`Npz::array`].
    pub fn dtype(&mut self, name: &str) -> Result<npy::Dtype, IoError> {
        let bytes = self.member(name)?;
        npy::parse_header(&bytes)
            .map(|h| h.dtype)
            .map_err(|e| in_member(e, name))
    }

    /// Member `name` as a string ([`npy::read_npy_text`]).
    ///
    /// # Errors
    /// As [`Npz::array`].
    pub fn text(&mut self, name: &str) -> Result<String, IoError> {
        let bytes = self.member(name)?;
        npy::read_npy_text(&bytes).map_err(|e| in_member(e, name))
    }
}

/// A member's error, its message starting with the member's name.
fn in_member(e: IoError, name: &str) -> IoError {
    match e {
        IoError::Npy { path, message } => IoError::Npy {
            path,
            message: format!("{name}: {message}"),
        },
        e => e,
    }
}

/// Writes arrays as an uncompressed `.npz` archive (`np.savez`'s layout: one `name.npy`
/// member each, stored), for tests and tools that hand arrays to NumPy.
///
/// # Errors
/// [`IoError::Io`] on a failed write; [`IoError::Format`] as [`npy::write_npy`].
///
/// # Examples
/// ```
/// use warpath_io::npz::{Npz, write_npz};
/// let mut f = std::io::Cursor::new(Vec::new());
/// write_npz(&mut f, &[("x", &[1.0f64, 2.0][..], &[2][..])])?;
/// let bytes = f.into_inner();
/// assert_eq!(Npz::new(&bytes)?.array::<f64>("x")?.data, vec![1.0, 2.0]);
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn write_npz<T: Element, W: std::io::Write + std::io::Seek>(
    w: W,
    arrays: &[(&str, &[T], &[usize])],
) -> Result<(), IoError> {
    let zip_io = |e: zip::result::ZipError| IoError::io(None, std::io::Error::other(e));
    let mut z = zip::ZipWriter::new(w);
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data, shape) in arrays {
        z.start_file(format!("{name}.npy"), opts).map_err(zip_io)?;
        npy::write_npy(&mut z, data, shape)?;
    }
    z.finish().map_err(zip_io)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// An archive of `(name, bytes)` members, stored or deflated.
    pub(crate) fn archive(members: &[(&str, Vec<u8>)], deflate: bool) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let method = if deflate {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        for (name, bytes) in members {
            z.start_file(*name, opts).unwrap();
            z.write_all(bytes).unwrap();
        }
        z.finish().unwrap().into_inner()
    }

    fn npy_of<T: Element>(v: &[T]) -> Vec<u8> {
        let mut b = Vec::new();
        npy::write_npy(&mut b, v, &[v.len()]).unwrap();
        b
    }

    #[test]
    fn members_stored_and_deflated_by_name() {
        for deflate in [false, true] {
            let f = archive(
                &[
                    ("a.npy", npy_of(&[1i32, 2, 3])),
                    ("b.npy", npy_of(&[0.5f64])),
                ],
                deflate,
            );
            assert!(is_zip(&f));
            let mut z = Npz::new(&f).unwrap();
            assert_eq!(z.names().len(), 2);
            assert_eq!(z.array::<i64>("a").unwrap().data, vec![1, 2, 3]);
            assert_eq!(z.array::<f64>("b.npy").unwrap().data, vec![0.5]);
            assert_eq!(z.dtype("a").unwrap(), npy::Dtype::new(npy::Kind::Int, 4));
            let e = z.array::<f64>("c").unwrap_err().to_string();
            assert!(e.contains("no member c.npy"), "{e}");
            let e = z.array::<u8>("b").unwrap_err().to_string();
            assert!(e.starts_with("b: "), "{e}");
        }
    }

    #[test]
    fn broken_archives_are_errors_not_panics() {
        let f = archive(&[("a.npy", npy_of(&[1.0f64; 64]))], true);
        for cut in [0, 4, 22, f.len() / 2, f.len() - 1] {
            let _ = Npz::new(&f[..cut]).and_then(|mut z| z.array::<f64>("a"));
        }
        // a flipped byte in the deflated data: a checksum or inflate error, typed
        let mut g = f.clone();
        g[45] ^= 0xff;
        if let Ok(mut z) = Npz::new(&g) {
            assert!(matches!(
                z.array::<f64>("a"),
                Err(IoError::Npy { .. }) | Ok(_)
            ));
        }
        assert!(Npz::new(b"").is_err());
        assert!(Npz::new(b"PK\x05\x06").is_err());
    }

    #[test]
    fn written_archives_read_back() {
        let mut f = Cursor::new(Vec::new());
        write_npz(&mut f, &[("x", &[1u8, 2, 3, 4][..], &[2, 2][..])]).unwrap();
        let bytes = f.into_inner();
        let a = Npz::new(&bytes).unwrap().array::<u8>("x").unwrap();
        assert_eq!((a.shape, a.data), (vec![2, 2], vec![1, 2, 3, 4]));
    }
}

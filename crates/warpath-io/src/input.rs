//! Reading arrays from files (or standard input): `.npy` by its magic bytes, raw `.bin` by its
//! extension, anything else as a text table.

use std::io::Read;
use std::path::Path;

use crate::npy::{self, Dtype};
use crate::table::{Table, TableOptions, parse_table};
use crate::{Element, IoError};

/// What a file held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// A `.npy` array of this dtype.
    Npy(Dtype),
    /// A text table.
    Text,
    /// Raw little-endian values.
    Raw,
}

/// An array read from a file: its shape, its values in C order, column names when the text
/// had a header.
#[derive(Debug, Clone, PartialEq)]
pub struct Array<T> {
    /// The shape: `[rows, cols]` for tables, the `.npy` shape, `[n]` for raw files.
    pub shape: Vec<usize>,
    /// The values in C order.
    pub data: Vec<T>,
    /// Column names from a text header.
    pub header: Option<Vec<String>>,
    /// What the file held.
    pub source: Source,
}

impl<T> Array<T> {
    /// The values as a vector: a 1-D array, one column, or one row; an empty input (an empty
    /// file, or one of only blank lines and comments) is the empty vector, as numpy reads it.
    ///
    /// # Errors
    /// [`IoError::Format`] naming `what` and the shape otherwise.
    pub fn into_vector(self, what: &str) -> Result<Vec<T>, IoError> {
        match self.shape[..] {
            [] | [_] => Ok(self.data),
            [_, 1] | [1, _] | [0, 0] => Ok(self.data),
            _ => Err(IoError::Format(format!(
                "{what} must be one column of numbers, not an array of shape {:?}",
                self.shape
            ))),
        }
    }

    /// The values as a `rows x cols` matrix. A text table is always 2-D (one column is
    /// `n x 1`); a `.npy` array must be 2-D, as scipy and scikit-learn require: a 1-D array is
    /// not taken for a column or a row.
    ///
    /// # Errors
    /// [`IoError::Format`] naming `what` for any other number of dimensions, in scipy's words
    /// (`expected a matrix (2-D array), got a 1-D array of shape [3]`).
    ///
    /// # Examples
    /// ```
    /// use warpath_io::{Array, Source};
    /// let a = Array { shape: vec![3], data: vec![1.0, 2.0, 3.0], header: None, source: Source::Raw };
    /// let e = a.into_matrix("the cost matrix").unwrap_err();
    /// assert!(e.to_string().contains("expected a matrix (2-D array), got a 1-D array"));
    /// ```
    pub fn into_matrix(self, what: &str) -> Result<(usize, usize, Vec<T>), IoError> {
        match self.shape[..] {
            [r, c] => Ok((r, c, self.data)),
            _ => Err(IoError::Format(format!(
                "{what}: expected a matrix (2-D array), got a {}-D array of shape {:?}",
                self.shape.len(),
                self.shape
            ))),
        }
    }
}

/// The bytes of a file, or of standard input for `-`.
///
/// # Errors
/// [`IoError::Io`] naming the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, IoError> {
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut v)
            .map_err(|e| IoError::io(None, e))?;
        return Ok(v);
    }
    std::fs::read(path).map_err(|e| IoError::io(Some(path), e))
}

/// Reads a text table from a file (`-`: standard input); see [`parse_table`].
///
/// # Errors
/// As [`parse_table`] (with the path), or [`IoError::Io`].
pub fn read_table<T: Element>(path: &Path, opts: &TableOptions) -> Result<Table<T>, IoError> {
    let bytes = read_bytes(path)?;
    parse_table(&bytes, opts).map_err(|e| e.in_file(path))
}

/// Reads raw little-endian values of `T`.
///
/// # Errors
/// [`IoError::Format`] when the length is not a whole number of values.
pub fn parse_raw<T: Element>(bytes: &[u8]) -> Result<Vec<T>, IoError> {
    let size = T::DTYPE.size as usize;
    if !bytes.len().is_multiple_of(size) {
        return Err(IoError::Format(format!(
            "{} bytes is not a whole number of {size}-byte {} values",
            bytes.len(),
            T::NAME
        )));
    }
    Ok(bytes.chunks_exact(size).map(T::read_le).collect())
}

/// Reads an array of `T` from a file (`-`: standard input): a `.npy` file (found by its magic
/// bytes, whatever its name; see [`npy::read_npy_bytes`] for the dtypes it converts), raw
/// little-endian values for a `.bin` file, otherwise a text table ([`parse_table`], default
/// options).
///
/// # Errors
/// [`IoError::Io`], [`IoError::Npy`], [`IoError::Parse`] or [`IoError::Format`], naming the
/// file.
///
/// # Examples
/// ```
/// let p = std::env::temp_dir().join(format!("wio-read-{}.csv", std::process::id()));
/// std::fs::write(&p, "a b\n1 2\n3 4\n")?;
/// let a = warpath_io::read_array::<f64>(&p)?;
/// assert_eq!(a.shape, vec![2, 2]);
/// assert_eq!(a.header.as_deref(), Some(&["a".to_string(), "b".to_string()][..]));
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_array<T: Element>(path: &Path) -> Result<Array<T>, IoError> {
    let bytes = read_bytes(path)?;
    parse_array(&bytes, path).map_err(|e| e.in_file(path))
}

/// [`read_array`] of bytes already read; `path` decides only whether they are raw (`.bin`).
///
/// # Errors
/// As [`read_array`], without the path.
pub fn parse_array<T: Element>(bytes: &[u8], path: &Path) -> Result<Array<T>, IoError> {
    if npy::is_npy(bytes) {
        let a = npy::read_npy_bytes::<T>(bytes)?;
        return Ok(Array {
            shape: a.shape,
            data: a.data,
            header: None,
            source: Source::Npy(a.dtype),
        });
    }
    if crate::Format::of_path(path) == Some(crate::Format::Bin) {
        let data = parse_raw::<T>(bytes).map_err(|e| match e {
            IoError::Format(m) => IoError::Format(format!("{}: {m}", path.display())),
            e => e,
        })?;
        return Ok(Array {
            shape: vec![data.len()],
            data,
            header: None,
            source: Source::Raw,
        });
    }
    let t = parse_table::<T>(bytes, &TableOptions::default())?;
    Ok(Array {
        shape: vec![t.rows, t.cols],
        data: t.data,
        header: t.header,
        source: Source::Text,
    })
}

/// The dtype of a `.npy` file, `None` when the file is not `.npy`. Lets a caller pick its
/// element type from the file (e.g. `warpath sort` keys).
///
/// # Errors
/// [`IoError::Io`]; [`IoError::Npy`] for a malformed or unsupported header.
pub fn npy_dtype(path: &Path) -> Result<Option<Dtype>, IoError> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let mut head = vec![0u8; 4096];
    let mut f = std::fs::File::open(path).map_err(|e| IoError::io(Some(path), e))?;
    let mut got = 0;
    loop {
        let k = f
            .read(&mut head[got..])
            .map_err(|e| IoError::io(Some(path), e))?;
        if k == 0 || got + k == head.len() {
            got += k;
            break;
        }
        got += k;
    }
    head.truncate(got);
    if !npy::is_npy(&head) {
        return Ok(None);
    }
    npy::parse_header(&head)
        .map(|h| Some(h.dtype))
        .map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_text_and_raw_by_content_and_extension() {
        let d = std::env::temp_dir().join(format!("wio-in-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        // .npy is found by its magic even under another name
        let p = d.join("keys.dat");
        let mut f = Vec::new();
        npy::write_npy(&mut f, &[5u16, 7], &[2]).unwrap();
        std::fs::write(&p, &f).unwrap();
        let a = read_array::<u32>(&p).unwrap();
        assert_eq!(
            (a.data.clone(), a.source),
            (vec![5, 7], Source::Npy(Dtype::new(npy::Kind::Uint, 2)))
        );
        assert_eq!(npy_dtype(&p).unwrap(), Some(Dtype::new(npy::Kind::Uint, 2)));
        assert_eq!(a.into_vector("keys").unwrap(), vec![5, 7]);
        let p = d.join("keys.bin");
        std::fs::write(&p, [1u8, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        assert_eq!(read_array::<u32>(&p).unwrap().data, vec![1, 2]);
        assert!(read_array::<u64>(&p).is_ok());
        std::fs::write(&p, [1u8, 0, 0]).unwrap();
        let e = read_array::<u32>(&p).unwrap_err().to_string();
        assert!(e.contains("3 bytes is not a whole number"), "{e}");
        let p = d.join("m.txt");
        std::fs::write(&p, "1 2 3\n4 5 6\n").unwrap();
        assert_eq!(npy_dtype(&p).unwrap(), None);
        let a = read_array::<f64>(&p).unwrap();
        assert!(
            a.clone()
                .into_vector("keys")
                .unwrap_err()
                .to_string()
                .contains("[2, 3]")
        );
        assert_eq!(a.into_matrix("costs").unwrap().0, 2);
        // a 1-D .npy is not a matrix; an empty text file is an empty vector
        let p = d.join("v.npy");
        let mut f = Vec::new();
        npy::write_npy(&mut f, &[1.0f64, 2.0, 3.0], &[3]).unwrap();
        std::fs::write(&p, &f).unwrap();
        let e = read_array::<f64>(&p)
            .unwrap()
            .into_matrix("the cost matrix");
        assert_eq!(
            e.unwrap_err().to_string(),
            "the cost matrix: expected a matrix (2-D array), got a 1-D array of shape [3]"
        );
        for text in ["", "\n\n", "# nothing\n", "\u{feff}"] {
            let p = d.join("empty.txt");
            std::fs::write(&p, text).unwrap();
            assert_eq!(
                read_array::<u32>(&p).unwrap().into_vector("keys").unwrap(),
                vec![]
            );
        }
        let e = read_array::<f64>(&d.join("missing.csv")).unwrap_err();
        assert_eq!(e.kind(), "io");
        assert!(e.to_string().contains("missing.csv"));
        let p = d.join("bad.csv");
        std::fs::write(&p, "1\n2\nx\n").unwrap();
        let e = read_array::<f64>(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("bad.csv: line 3, column 1: `x` is not a f64 number"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}

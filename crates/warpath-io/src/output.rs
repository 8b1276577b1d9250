//! Where results go: a file whose extension picks the format, or standard output (`-`).

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::{Element, IoError, npy};

/// An output format, chosen by a file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `.txt`: values separated by spaces, one row per line (standard output's format).
    Text,
    /// `.csv`: comma-separated values, with a header line when there are column names.
    Csv,
    /// `.tsv`: tab-separated values, with a header line when there are column names.
    Tsv,
    /// `.npy`: NumPy's binary format.
    Npy,
    /// `.bin`: raw little-endian values, no header.
    Bin,
    /// `.svg`: a vector image.
    Svg,
    /// `.png`: a bitmap image.
    Png,
    /// `.dot` / `.gv`: GraphViz.
    Dot,
    /// `.fa` / `.fasta`: sequences.
    Fasta,
    /// `.adj`: `a -> b, c` adjacency lines.
    Adjacency,
    /// `.gfa`: GFA 1.0 assembly graphs (segments and links).
    Gfa,
    /// `.jsonl` / `.ndjson` / `.json`: JSON lines, one object a line.
    JsonLines,
}

impl Format {
    /// The format of `path`'s extension (case-insensitive), `None` for none or an unknown one.
    ///
    /// ```
    /// use warpath_io::Format;
    /// assert_eq!(Format::of_path("x.NPY".as_ref()), Some(Format::Npy));
    /// assert_eq!(Format::of_path("x.xlsx".as_ref()), None);
    /// ```
    pub fn of_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" => Format::Text,
            "csv" => Format::Csv,
            "tsv" => Format::Tsv,
            "npy" => Format::Npy,
            "bin" => Format::Bin,
            "svg" => Format::Svg,
            "png" => Format::Png,
            "dot" | "gv" => Format::Dot,
            "fa" | "fasta" => Format::Fasta,
            "adj" => Format::Adjacency,
            "gfa" => Format::Gfa,
            "jsonl" | "ndjson" | "json" => Format::JsonLines,
            _ => return None,
        })
    }

    /// The usual extension (`.csv`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => ".txt",
            Format::Csv => ".csv",
            Format::Tsv => ".tsv",
            Format::Npy => ".npy",
            Format::Bin => ".bin",
            Format::Svg => ".svg",
            Format::Png => ".png",
            Format::Dot => ".dot",
            Format::Fasta => ".fa",
            Format::Adjacency => ".adj",
            Format::Gfa => ".gfa",
            Format::JsonLines => ".jsonl",
        }
    }

    /// Whether the format is text a terminal can show.
    pub fn is_printable(self) -> bool {
        matches!(
            self,
            Format::Text
                | Format::Csv
                | Format::Tsv
                | Format::Dot
                | Format::Fasta
                | Format::Adjacency
                | Format::Gfa
                | Format::JsonLines
        )
    }
}

/// Where an output goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    /// Standard output.
    Stdout,
    /// A file.
    File(PathBuf),
}

/// An output: destination and format.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Output {
    /// Where.
    pub destination: Destination,
    /// In which format.
    pub format: Format,
}

fn list(formats: &[Format]) -> String {
    formats
        .iter()
        .map(|f| f.extension())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Output {
    /// The output named on the command line by `flag` (for messages): `-` is standard output in
    /// `stdout_format` (which must be printable); a path's extension picks its format, which
    /// must be one of `allowed`.
    ///
    /// # Errors
    /// [`IoError::Format`] naming the flag, the extension and the allowed ones.
    ///
    /// # Examples
    /// ```
    /// use warpath_io::{Destination, Format, Output};
    /// let allowed = [Format::Text, Format::Csv, Format::Npy];
    /// let o = Output::parse("--output", "labels.npy".as_ref(), &allowed, Format::Text)?;
    /// assert_eq!(o.format, Format::Npy);
    /// let o = Output::parse("--output", "-".as_ref(), &allowed, Format::Text)?;
    /// assert_eq!(o.destination, Destination::Stdout);
    /// let e = Output::parse("--output", "x.xlsx".as_ref(), &allowed, Format::Text).unwrap_err();
    /// assert!(e.to_string().contains(".txt, .csv, .npy"));
    /// # Ok::<(), warpath_io::IoError>(())
    /// ```
    pub fn parse(
        flag: &str,
        arg: &Path,
        allowed: &[Format],
        stdout_format: Format,
    ) -> Result<Output, IoError> {
        if arg.as_os_str() == "-" {
            return Ok(Output {
                destination: Destination::Stdout,
                format: stdout_format,
            });
        }
        match Format::of_path(arg) {
            Some(f) if allowed.contains(&f) => Ok(Output {
                destination: Destination::File(arg.to_owned()),
                format: f,
            }),
            _ => Err(IoError::Format(format!(
                "{flag} {}: the extension says what to write; use one of {}{}",
                arg.display(),
                list(allowed),
                if stdout_format.is_printable() {
                    ", or - for standard output"
                } else {
                    ""
                }
            ))),
        }
    }

    /// Standard output in `format`.
    pub fn stdout(format: Format) -> Output {
        Output {
            destination: Destination::Stdout,
            format,
        }
    }

    /// Whether this output is standard output.
    pub fn is_stdout(&self) -> bool {
        self.destination == Destination::Stdout
    }

    /// Whether this output is standard output and that is a terminal.
    pub fn is_terminal(&self) -> bool {
        self.is_stdout() && std::io::stdout().is_terminal()
    }

    /// The file's path, `None` for standard output.
    pub fn path(&self) -> Option<&Path> {
        match &self.destination {
            Destination::File(p) => Some(p),
            Destination::Stdout => None,
        }
    }

    /// Where it goes, for messages: the path or `standard output`.
    pub fn describe(&self) -> String {
        self.path()
            .map_or("standard output".into(), |p| p.display().to_string())
    }

    /// Checks now, before any work, that the file can be written: its folder exists and is
    /// writable and the path is not a folder. Nothing is created or truncated.
    ///
    /// # Errors
    /// [`IoError::Io`] naming the path.
    pub fn check(&self) -> Result<(), IoError> {
        match self.path() {
            Some(p) => check_writable(p),
            None => Ok(()),
        }
    }

    /// Opens the destination for writing (buffered).
    ///
    /// # Errors
    /// [`IoError::Io`] when the file cannot be created.
    pub fn open(&self) -> Result<Sink, IoError> {
        let w: Box<dyn Write> = match self.path() {
            Some(p) => Box::new(File::create(p).map_err(|e| IoError::io(Some(p), e))?),
            None => Box::new(std::io::stdout().lock()),
        };
        Ok(Sink {
            inner: BufWriter::with_capacity(1 << 20, w),
            path: self.path().map(ToOwned::to_owned),
        })
    }

    /// Writes a vector (`cols = None`) or a row-major matrix of `cols` columns in this output's
    /// format: text (`.txt`, standard output: one row per line, values separated by spaces),
    /// `.csv` / `.tsv` (with `header` as the first line when given), `.npy` (1-D or 2-D) or
    /// `.bin` (raw little-endian).
    ///
    /// # Errors
    /// [`IoError::Format`] for a format that does not hold arrays; [`IoError::Io`].
    ///
    /// # Examples
    /// ```
    /// use warpath_io::{Format, Output};
    /// let p = std::env::temp_dir().join(format!("wio-doc-{}.csv", std::process::id()));
    /// let o = Output::parse("--out", &p, &[Format::Csv], Format::Text)?;
    /// o.write_array(&[1.5f64, 2.0, 3.0, 4.0], Some(2), Some(&["x".into(), "y".into()]))?;
    /// assert_eq!(std::fs::read_to_string(&p)?, "x,y\n1.5,2.0\n3.0,4.0\n");
    /// # std::fs::remove_file(&p)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_array<T: Element>(
        &self,
        data: &[T],
        cols: Option<usize>,
        header: Option<&[String]>,
    ) -> Result<(), IoError> {
        let mut sink = self.open()?;
        let width = cols.unwrap_or(1).max(1);
        match self.format {
            Format::Npy => {
                let shape = match cols {
                    None => vec![data.len()],
                    Some(c) => vec![data.len() / c.max(1), c],
                };
                npy::write_npy(&mut sink.inner, data, &shape).map_err(|e| sink.locate(e))?;
            }
            Format::Bin => {
                let mut buf = Vec::with_capacity(1 << 16);
                for chunk in data.chunks(1 << 14) {
                    buf.clear();
                    for &v in chunk {
                        v.write_le(&mut buf);
                    }
                    sink.write_all(&buf)?;
                }
            }
            Format::Text | Format::Csv | Format::Tsv => {
                let sep = match self.format {
                    Format::Csv => b',',
                    Format::Tsv => b'\t',
                    _ => b' ',
                };
                if let (Some(h), Format::Csv | Format::Tsv) = (header, self.format) {
                    let line = h.join(if sep == b',' { "," } else { "\t" });
                    sink.write_all(line.as_bytes())?;
                    sink.write_all(b"\n")?;
                }
                let mut buf = Vec::with_capacity(1 << 16);
                for rows in data.chunks(width * 4096) {
                    buf.clear();
                    format_rows(rows, width, sep, &mut buf);
                    sink.write_all(&buf)?;
                }
            }
            other => {
                return Err(IoError::Format(format!(
                    "{}: arrays cannot be written as {}",
                    self.describe(),
                    other.extension()
                )));
            }
        }
        sink.finish()
    }
}

/// Appends `data` as text rows of `width` values separated by `sep`, one row per line (the
/// text formats of [`Output::write_array`]).
///
/// ```
/// let mut buf = Vec::new();
/// warpath_io::format_rows(&[1u8, 2, 3, 4], 2, b',', &mut buf);
/// assert_eq!(buf, b"1,2\n3,4\n");
/// ```
pub fn format_rows<T: Element>(data: &[T], width: usize, sep: u8, buf: &mut Vec<u8>) {
    for row in data.chunks(width.max(1)) {
        for (j, &v) in row.iter().enumerate() {
            if j > 0 {
                buf.push(sep);
            }
            v.write_text(buf);
        }
        buf.push(b'\n');
    }
}

/// A buffered writer to a file or standard output whose errors name their destination.
pub struct Sink {
    inner: BufWriter<Box<dyn Write>>,
    path: Option<PathBuf>,
}

impl Sink {
    fn locate(&self, e: IoError) -> IoError {
        match e {
            IoError::Io { path: None, error } => IoError::Io {
                path: self.path.clone(),
                error,
            },
            other => other,
        }
    }

    /// Writes all of `bytes`.
    ///
    /// # Errors
    /// [`IoError::Io`] naming the destination ([`IoError::is_broken_pipe`] when standard
    /// output's reader has gone).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), IoError> {
        self.inner
            .write_all(bytes)
            .map_err(|e| IoError::io(self.path.as_deref(), e))
    }

    /// Flushes everything written.
    ///
    /// # Errors
    /// As [`Sink::write_all`].
    pub fn finish(mut self) -> Result<(), IoError> {
        self.inner
            .flush()
            .map_err(|e| IoError::io(self.path.as_deref(), e))
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Checks that `path` could be written now without creating or truncating it: the folder
/// exists, is a folder and is writable, and `path` is not itself a folder.
///
/// # Errors
/// [`IoError::Io`] naming the path and the reason.
///
/// ```
/// assert!(warpath_io::check_writable("/nonexistent-dir/x.txt".as_ref()).is_err());
/// assert!(warpath_io::check_writable(&std::env::temp_dir().join("x.txt")).is_ok());
/// ```
pub fn check_writable(path: &Path) -> Result<(), IoError> {
    let fail = |kind, msg: &str| IoError::io(Some(path), std::io::Error::new(kind, msg.to_owned()));
    if path.is_dir() {
        return Err(fail(
            std::io::ErrorKind::IsADirectory,
            "is a folder, not a file",
        ));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(fail(
                std::io::ErrorKind::NotADirectory,
                "its folder is a file",
            ));
        }
        Err(_) => {
            return Err(fail(
                std::io::ErrorKind::NotFound,
                "its folder does not exist",
            ));
        }
    }
    if !writable(path, parent) {
        return Err(fail(std::io::ErrorKind::PermissionDenied, "not writable"));
    }
    Ok(())
}

#[cfg(unix)]
fn writable(path: &Path, parent: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let target = if path.exists() { path } else { parent };
    let Ok(c) = std::ffi::CString::new(target.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path that lives across the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(not(unix))]
fn writable(path: &Path, parent: &Path) -> bool {
    let target = if path.exists() { path } else { parent };
    std::fs::metadata(target).is_ok_and(|m| !m.permissions().readonly())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wio-out-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn formats_by_extension_and_refusals() {
        let all = [Format::Text, Format::Csv, Format::Npy, Format::Bin];
        for (name, f) in [
            ("a.txt", Format::Text),
            ("a.CSV", Format::Csv),
            ("a.npy", Format::Npy),
            ("a.bin", Format::Bin),
        ] {
            assert_eq!(
                Output::parse("--o", name.as_ref(), &all, Format::Text)
                    .unwrap()
                    .format,
                f
            );
        }
        for name in ["a", "a.xlsx", "a.svg", "-x"] {
            let e = Output::parse("--o", name.as_ref(), &all, Format::Text).unwrap_err();
            assert!(e.to_string().starts_with(&format!("--o {name}:")), "{e}");
        }
        // a file literally named "-" is not created: it is standard output
        assert!(
            Output::parse("--o", "-".as_ref(), &all, Format::Text)
                .unwrap()
                .is_stdout()
        );
    }

    #[test]
    fn arrays_in_every_format_read_back() {
        let v = [3u32, 1, 4, 1, 5, 9];
        for (name, want) in [
            ("v.txt", "3 1\n4 1\n5 9\n"),
            ("v.csv", "a,b\n3,1\n4,1\n5,9\n"),
            ("v.tsv", "a\tb\n3\t1\n4\t1\n5\t9\n"),
        ] {
            let p = tmp(name);
            let o = Output::parse(
                "--o",
                &p,
                &[Format::Text, Format::Csv, Format::Tsv],
                Format::Text,
            )
            .unwrap();
            o.write_array(&v, Some(2), Some(&["a".into(), "b".into()]))
                .unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), want);
            let t = crate::read_table::<u32>(&p, &crate::TableOptions::default()).unwrap();
            assert_eq!((t.rows, t.cols, t.data), (3, 2, v.to_vec()));
        }
        let p = tmp("v.npy");
        Output::parse("--o", &p, &[Format::Npy], Format::Text)
            .unwrap()
            .write_array(&v, Some(3), None)
            .unwrap();
        let a = crate::read_array::<u32>(&p).unwrap();
        assert_eq!((a.shape.clone(), a.data), (vec![2, 3], v.to_vec()));
        let p = tmp("v.bin");
        Output::parse("--o", &p, &[Format::Bin], Format::Text)
            .unwrap()
            .write_array(&v, None, None)
            .unwrap();
        assert_eq!(std::fs::read(&p).unwrap().len(), 24);
        let p = tmp("v.svg");
        let o = Output::parse("--o", &p, &[Format::Svg], Format::Text).unwrap();
        assert!(o.write_array(&v, None, None).is_err());
    }

    #[test]
    fn writability_is_checked_without_creating() {
        let p = tmp("new.txt");
        let _ = std::fs::remove_file(&p);
        check_writable(&p).unwrap();
        assert!(!p.exists());
        assert!(check_writable(&tmp("no-such-dir").join("x.txt")).is_err());
        assert!(check_writable(p.parent().unwrap()).is_err());
        let f = tmp("file");
        std::fs::write(&f, "x").unwrap();
        assert!(check_writable(&f.join("x.txt")).is_err());
        assert!(check_writable("relative-in-cwd.txt".as_ref()).is_ok());
    }
}

#![doc = include_str!("../README.md")]

mod count;
mod dtype;
mod element;
mod error;
mod input;
mod limits;
pub mod matrix_market;
pub mod named_list;
pub mod npy;
pub mod npz;
mod output;
#[cfg(feature = "plot")]
pub mod plot;
pub mod sparse;
mod table;

pub use count::{parse_count, parse_count_usize};
pub use dtype::Scalar;
pub use element::Element;
pub use error::{IoError, human_bytes, human_duration};
pub use input::{
    Array, Source, npy_dtype, parse_array, parse_raw, read_array, read_bytes, read_table,
};
pub use limits::{MAX_SECONDS_UNFORCED, check_duration, check_memory, check_memory_against};
pub use output::{Destination, Format, Output, Sink, check_writable, format_rows};
pub use table::{Delimiter, HEADER_RULE, Header, Table, TableOptions, is_name, parse_table};

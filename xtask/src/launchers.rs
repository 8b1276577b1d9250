//! Typed Rust launchers generated from the kernels' own signatures (`cargo xtask kernels`).
//!
//! For each `kernels-cuda/<module>.cu`, `kernels-cuda/ptx/<module>.rs` holds:
//! - `MODULE`, the embedded PTX;
//! - one `pub const` per name listed in a `WARPATH_SHARE_WITH_HOST(A, B, ...)` line of the
//!   `.cu` file, with the value the C++ compiler computes (the constant is declared once, in
//!   CUDA);
//! - one `pub unsafe fn <entry>(gpu, cfg, args...)` per `extern "C" __global__` entry, with the
//!   parameters of the C signature after preprocessing (macro-generated entries included):
//!   `const T*` becomes `&impl DeviceSource<T>`, `T*` becomes `&mut impl DeviceSink<T>`,
//!   scalars their exact Rust type, a struct `S` by value becomes `super::S` (a `#[repr(C)]`
//!   mirror declared next to the `kernels` module, with its size checked at compile time).
//!
//! Entries that differ only in their element types form a *family*: `<family>_<t>[_<t>...]`,
//! where each `<t>` is a type suffix (`u32`, `i64`, `f32`, ...) or a word width (`w32`, `w64`).
//! A family gets one generic launcher, `<family>::<T, U, ...>`, instead of one launcher per
//! entry: each parameter whose type varies across the entries takes a type parameter
//! (for type suffixes, parameters that vary together share one), and the launcher picks the entry whose types are
//! exactly those of its arguments (type suffixes), or whose word widths are their sizes (`w32`,
//! `w64`: the kernel moves bits, any element type of that size will do). Host code written
//! for a generic element type then needs no per-type dispatch of its own; types that no entry
//! takes are an error at run time (`GpuError::NoKernelForTypes`), found by the tests of each type.
//!
//! Every parameter's size is checked against the `.param` list of the entry in the committed
//! PTX, so a wrong type mapping cannot reach a launch.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::target_dir;

/// One kernel parameter as the generator understands it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    /// `const T*`: read by the kernel.
    Read { name: String, ty: &'static str },
    /// `T*`: written (or read and written) by the kernel.
    Write { name: String, ty: &'static str },
    /// A primitive by value.
    Value { name: String, ty: &'static str },
    /// A struct by value: the Rust mirror `super::<ty>`.
    Struct { name: String, ty: String },
}

impl Param {
    fn name(&self) -> &str {
        match self {
            Param::Read { name, .. }
            | Param::Write { name, .. }
            | Param::Value { name, .. }
            | Param::Struct { name, .. } => name,
        }
    }
}

/// One `extern "C" __global__` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub params: Vec<Param>,
    /// The C signature as written (after preprocessing), for the docs.
    pub signature: String,
}

/// Type suffixes that name an entry's element types, and the word widths (`w32`, `w64`).
const TYPE_SUFFIXES: &[&str] = &[
    "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64", "w32", "w64",
];

/// One parameter of a family launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The same in every entry.
    Fixed(Param),
    /// A pointer or scalar whose element type varies: type parameter `group` (`T`, `U`, ...).
    Generic { param: Param, group: usize },
}

/// Entries that differ only in their element types (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Family {
    /// The entries' common name.
    pub name: String,
    /// The parameters, with the generic ones marked.
    pub slots: Vec<Slot>,
    /// Per entry: its name, signature and the element type of each type parameter.
    pub members: Vec<(String, String, Vec<&'static str>)>,
    /// `w32`/`w64` entries: matched by size, not by type.
    pub by_width: bool,
}

/// The name of a type parameter.
fn generic_name(group: usize) -> String {
    const NAMES: &[&str] = &["T", "U", "V", "W", "X", "Y", "Z"];
    NAMES
        .get(group)
        .map(|s| (*s).to_owned())
        .unwrap_or_else(|| format!("T{group}"))
}

fn param_ty(p: &Param) -> Option<&'static str> {
    match p {
        Param::Read { ty, .. } | Param::Write { ty, .. } | Param::Value { ty, .. } => Some(ty),
        Param::Struct { .. } => None,
    }
}

/// `p` with its element type replaced (to compare the shapes of two entries' parameters).
fn untyped(p: &Param) -> Param {
    match p {
        Param::Read { name, .. } => Param::Read {
            name: name.clone(),
            ty: "",
        },
        Param::Write { name, .. } => Param::Write {
            name: name.clone(),
            ty: "",
        },
        Param::Value { name, .. } => Param::Value {
            name: name.clone(),
            ty: "",
        },
        Param::Struct { .. } => p.clone(),
    }
}

/// The family name and suffixes of an entry named `<family>_<t>[_<t>...]`.
fn split_suffixes(name: &str) -> Option<(&str, Vec<&str>)> {
    let mut rest = name;
    let mut suffixes = Vec::new();
    while let Some((head, last)) = rest.rsplit_once('_') {
        if !TYPE_SUFFIXES.contains(&last) {
            break;
        }
        suffixes.insert(0, last);
        rest = head;
    }
    (!suffixes.is_empty() && !rest.is_empty()).then_some((rest, suffixes))
}

/// Groups the entries into families (two or more entries each); entries named alike whose
/// parameters differ in more than their element types stay on their own.
pub(crate) fn families(entries: &[Entry]) -> Vec<Family> {
    let mut groups: Vec<(String, Vec<&Entry>)> = Vec::new();
    for e in entries {
        let Some((family, _)) = split_suffixes(&e.name) else {
            continue;
        };
        match groups.iter_mut().find(|(f, _)| f == family) {
            Some((_, members)) => members.push(e),
            None => groups.push((family.to_owned(), vec![e])),
        }
    }
    let mut out = Vec::new();
    'families: for (name, members) in groups {
        if members.len() < 2 || entries.iter().any(|e| e.name == name) {
            continue;
        }
        let widths: Vec<bool> = members
            .iter()
            .flat_map(|e| split_suffixes(&e.name).map(|(_, s)| s).unwrap_or_default())
            .map(|s| s.starts_with('w'))
            .collect();
        let by_width = widths.iter().all(|&w| w);
        if !by_width && widths.iter().any(|&w| w) {
            continue;
        }
        let first = members[0];
        if members.iter().any(|e| {
            e.params.len() != first.params.len()
                || e.params
                    .iter()
                    .zip(&first.params)
                    .any(|(a, b)| untyped(a) != untyped(b))
        }) {
            continue;
        }
        // Columns of element types; identical columns share a type parameter.
        let mut columns: Vec<Vec<&'static str>> = Vec::new();
        let mut slots = Vec::new();
        for (i, p) in first.params.iter().enumerate() {
            let column: Vec<Option<&'static str>> =
                members.iter().map(|e| param_ty(&e.params[i])).collect();
            if column.iter().all(|t| *t == column[0]) {
                slots.push(Slot::Fixed(p.clone()));
                continue;
            }
            let column: Vec<&'static str> = column.into_iter().flatten().collect();
            // Exact types: columns that vary together share a type parameter (x, w, c: `T`).
            // Word widths: each column has its own (keys and their ordered bits differ in type).
            let shared = if by_width {
                None
            } else {
                columns.iter().position(|c| *c == column)
            };
            let group = match shared {
                Some(g) => g,
                None => {
                    columns.push(column);
                    columns.len() - 1
                }
            };
            slots.push(Slot::Generic {
                param: p.clone(),
                group,
            });
        }
        if columns.is_empty() {
            continue;
        }
        // Each entry must be told apart by its types (or their sizes).
        let mut keys = Vec::new();
        let mut members_out = Vec::new();
        for (m, e) in members.iter().enumerate() {
            let types: Vec<&'static str> = columns.iter().map(|c| c[m]).collect();
            let key: Vec<String> = if by_width {
                types
                    .iter()
                    .map(|t| rust_size(t).unwrap_or(0).to_string())
                    .collect()
            } else {
                types.iter().map(|t| (*t).to_owned()).collect()
            };
            if keys.contains(&key) {
                continue 'families;
            }
            keys.push(key);
            members_out.push((e.name.clone(), e.signature.clone(), types));
        }
        out.push(Family {
            name,
            slots,
            members: members_out,
            by_width,
        });
    }
    out
}

/// C spelling of a primitive (after removing `const`, `volatile`, `__restrict__`) -> Rust.
fn primitive(c: &str) -> Option<&'static str> {
    Some(match c {
        "u8" | "unsigned char" | "uint8_t" => "u8",
        "signed char" | "char" | "int8_t" | "i8" => "i8",
        "u16" | "unsigned short" | "uint16_t" => "u16",
        "short" | "int16_t" | "i16" => "i16",
        "u32" | "unsigned" | "unsigned int" | "uint32_t" => "u32",
        "int" | "int32_t" | "i32" => "i32",
        "u64" | "unsigned long long" | "unsigned long long int" | "uint64_t" | "size_t" => "u64",
        "i64" | "long long" | "long long int" | "int64_t" => "i64",
        "float" => "f32",
        "double" => "f64",
        "bool" => "bool",
        _ => return None,
    })
}

fn rust_size(ty: &str) -> Option<usize> {
    Some(match ty {
        "u8" | "i8" | "bool" => 1,
        "u16" | "i16" => 2,
        "u32" | "i32" | "f32" => 4,
        "u64" | "i64" | "f64" => 8,
        _ => return None,
    })
}

/// Words that belong to a C type, never to a parameter name.
const TYPE_WORDS: &[&str] = &[
    "unsigned", "signed", "int", "long", "short", "char", "float", "double", "bool", "void",
    "const", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t", "size_t",
];

const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while",
    "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

fn rust_ident(name: &str, taken: &[String]) -> String {
    // Rust's parameters are snake_case (a CUDA `S` becomes `s`).
    let lower = name.to_ascii_lowercase();
    let name = lower.as_str();
    let mut n = match name {
        "self" | "Self" | "crate" | "super" => format!("{name}_"),
        _ if RUST_KEYWORDS.contains(&name) => format!("r#{name}"),
        _ => name.to_owned(),
    };
    // `gpu` and `cfg` are the launcher's own first parameters, `kernel` a local of its body.
    while n == "gpu" || n == "cfg" || n == "kernel" || taken.contains(&n) {
        n.push('_');
    }
    n
}

/// Splits `s` at commas outside parentheses, brackets and angle brackets.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Parses one C parameter declaration, e.g. `const float* __restrict__ x`.
fn parse_param(decl: &str, index: usize, taken: &[String]) -> Result<Param> {
    let spaced = decl.replace('*', " * ").replace('&', " & ");
    let mut tokens: Vec<&str> = spaced.split_whitespace().collect();
    if tokens.contains(&"&") {
        bail!("`{decl}`: a kernel parameter cannot be a reference");
    }
    tokens.retain(|t| {
        !matches!(
            *t,
            "__restrict__" | "__restrict" | "restrict" | "volatile" | "struct"
        )
    });
    let stars = tokens.iter().filter(|t| **t == "*").count();
    if stars > 1 {
        bail!("`{decl}`: pointers to pointers are not supported");
    }
    let star_at = tokens.iter().position(|t| *t == "*");
    // The name is the last identifier, when one follows the type.
    let last = *tokens.last().context("empty parameter")?;
    let named = tokens.len() > 1
        && last.chars().all(is_ident_char)
        && !TYPE_WORDS.contains(&last)
        && !tokens[tokens.len() - 2].ends_with("::");
    let (type_tokens, name) = if named {
        (tokens[..tokens.len() - 1].to_vec(), last.to_owned())
    } else {
        (tokens.clone(), format!("arg{index}"))
    };
    let name = rust_ident(&name, taken);
    // `const` before the `*` qualifies the pointee; after it, the pointer itself.
    let pointee_const = match star_at {
        Some(p) => type_tokens[..p.min(type_tokens.len())].contains(&"const"),
        None => false,
    };
    let base: Vec<&str> = type_tokens
        .iter()
        .copied()
        .filter(|t| *t != "const" && *t != "*")
        .collect();
    let base = base.join(" ");
    match (star_at.is_some(), primitive(&base)) {
        (true, Some(ty)) if pointee_const => Ok(Param::Read { name, ty }),
        (true, Some(ty)) => Ok(Param::Write { name, ty }),
        (true, None) => bail!("`{decl}`: pointers to `{base}` are not supported (use a primitive)"),
        (false, Some(ty)) => Ok(Param::Value { name, ty }),
        (false, None) if base.chars().all(is_ident_char) && !base.is_empty() => {
            Ok(Param::Struct { name, ty: base })
        }
        (false, None) => bail!("`{decl}`: unsupported parameter type `{base}`"),
    }
}

/// Finds every `extern "C" __global__` entry in preprocessed CUDA text.
pub(crate) fn parse_entries(text: &str) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    let key = "__global__";
    let mut at = 0;
    while let Some(off) = text[at..].find(key) {
        let start = at + off;
        at = start + key.len();
        // Only entries: `extern "C"` right before (possibly with other qualifiers in between).
        let before = text[..start].trim_end();
        if !before.ends_with("extern \"C\"") {
            continue;
        }
        let rest = &text[at..];
        let open = rest
            .find('(')
            .context("`__global__` without a parameter list")?;
        let mut head = rest[..open].trim().to_owned();
        let mut params_from = at + open;
        // `void __launch_bounds__(...) name(` : skip the launch bounds' parentheses.
        if head.ends_with("__launch_bounds__") {
            let close = matching(text, params_from)?;
            let rest2 = &text[close + 1..];
            let open2 = rest2.find('(').context("missing parameter list")?;
            head = format!("{head} {}", rest2[..open2].trim());
            params_from = close + 1 + open2;
        }
        let name = head
            .split_whitespace()
            .last()
            .filter(|n| n.chars().all(is_ident_char))
            .with_context(|| format!("cannot read the entry name in `{head}`"))?
            .to_owned();
        let close = matching(text, params_from)?;
        let list = &text[params_from + 1..close];
        let mut params: Vec<Param> = Vec::new();
        let decls = split_top(list);
        let decls: Vec<String> = if decls.len() == 1 && decls[0].trim() == "void" {
            Vec::new()
        } else {
            decls
        };
        for (i, d) in decls.iter().enumerate() {
            let taken: Vec<String> = params.iter().map(|p| p.name().to_owned()).collect();
            let p = parse_param(d.trim(), i, &taken)
                .with_context(|| format!("kernel `{name}`, parameter {i}"))?;
            params.push(p);
        }
        let signature = format!(
            "{name}({})",
            decls
                .iter()
                .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join(", ")
        );
        at = close;
        out.push(Entry {
            name,
            params,
            signature,
        });
    }
    Ok(out)
}

/// Index of the `)` matching the `(` at `open`.
fn matching(text: &str, open: usize) -> Result<usize> {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(open + i);
                }
            }
            _ => {}
        }
    }
    bail!("unbalanced parentheses")
}

/// Parameter sizes of every `.entry` in PTX text, in bytes.
pub(crate) fn ptx_param_sizes(ptx: &str) -> Result<BTreeMap<String, Vec<usize>>> {
    let mut out = BTreeMap::new();
    let mut at = 0;
    while let Some(off) = ptx[at..].find(".entry ") {
        let start = at + off + ".entry ".len();
        let open = start
            + ptx[start..]
                .find('(')
                .context("PTX .entry without parameters")?;
        let name = ptx[start..open].trim().to_owned();
        let close = matching(ptx, open)?;
        let mut sizes = Vec::new();
        for p in ptx[open + 1..close].split(',') {
            let p = p.trim();
            if p.is_empty() {
                continue;
            }
            let size = if let Some(b) = p.find('[') {
                let e = p[b..].find(']').context("PTX array parameter")? + b;
                p[b + 1..e].trim().parse::<usize>()?
            } else if p.contains(".u64")
                || p.contains(".s64")
                || p.contains(".f64")
                || p.contains(".b64")
            {
                8
            } else if p.contains(".u32")
                || p.contains(".s32")
                || p.contains(".f32")
                || p.contains(".b32")
            {
                4
            } else if p.contains(".u16") || p.contains(".s16") || p.contains(".b16") {
                2
            } else if p.contains(".u8") || p.contains(".s8") || p.contains(".b8") {
                1
            } else {
                bail!("unknown PTX parameter `{p}` of {name}");
            };
            sizes.push(size);
        }
        out.insert(name, sizes);
        at = close;
    }
    Ok(out)
}

/// The `.cu` file after the C preprocessor (macro-generated entries expanded).
fn preprocess(src_dir: &Path, cu: &str) -> Result<String> {
    let out = Command::new("g++")
        .current_dir(src_dir)
        .args(["-E", "-P", "-x", "c++", "-std=c++17", "-I."])
        .arg(cu)
        .output()
        .context("running g++ -E (install g++: apt-get install g++)")?;
    if !out.status.success() {
        bail!(
            "g++ -E failed on kernels-cuda/{cu}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// Names listed in `WARPATH_SHARE_WITH_HOST(A, B)` lines of the source.
fn shared_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in source.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("WARPATH_SHARE_WITH_HOST(")
            && let Some(end) = rest.find(')')
        {
            {
                names.extend(
                    rest[..end]
                        .split(',')
                        .map(|s| s.trim().to_owned())
                        .filter(|s| !s.is_empty()),
                );
            }
        }
    }
    names
}

/// Values of the shared constants, computed by the C++ compiler from the `.cu` file's own
/// `#define`s (so `SCAN_TILE (PRIM_BLOCK * SCAN_ITEMS)` needs no evaluator here).
fn shared_values(
    root: &Path,
    src_dir: &Path,
    cu: &str,
    names: &[String],
) -> Result<Vec<(String, u64)>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let macros = |path: Option<&str>| -> Result<String> {
        let mut cmd = Command::new("g++");
        cmd.current_dir(src_dir)
            .args(["-E", "-dM", "-x", "c++", "-std=c++17", "-I."]);
        match path {
            Some(p) => cmd.arg(p),
            None => cmd.arg("/dev/null"),
        };
        let out = cmd.output().context("running g++ -dM")?;
        if !out.status.success() {
            bail!("g++ -dM failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8(out.stdout)?)
    };
    let builtin: std::collections::HashSet<String> =
        macros(None)?.lines().map(str::to_owned).collect();
    let all = macros(Some(cu))?;
    let mut program = String::from("#include <cstdio>\n");
    for l in all.lines().filter(|l| !builtin.contains(*l)) {
        program.push_str(l);
        program.push('\n');
    }
    program.push_str("int main() {\n");
    for n in names {
        program.push_str(&format!(
            "  std::printf(\"%s %llu %d\\n\", \"{n}\", (unsigned long long)({n}), (int)(({n}) < 0));\n"
        ));
    }
    program.push_str("  return 0;\n}\n");
    let dir = target_dir(root).join("launchers");
    fs::create_dir_all(&dir)?;
    let stem = cu.trim_end_matches(".cu");
    let cpp = dir.join(format!("{stem}_constants.cpp"));
    let exe = dir.join(format!("{stem}_constants"));
    fs::write(&cpp, program)?;
    let status = Command::new("g++")
        .args(["-std=c++17", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .status()
        .context("running g++")?;
    if !status.success() {
        bail!("g++ could not evaluate the constants shared by kernels-cuda/{cu}: {names:?}");
    }
    let out = Command::new(&exe).output()?;
    let text = String::from_utf8(out.stdout)?;
    let mut values = Vec::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(n), Some(v), Some(neg)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if neg == "1" {
            bail!("{n} in kernels-cuda/{cu} is negative; shared constants must be unsigned");
        }
        values.push((n.to_owned(), v.parse::<u64>()?));
    }
    Ok(values)
}

/// The generated Rust text for one module: one `gpu_runtime::launchers!` invocation, one
/// line per launcher (the macro writes the functions and their docs).
pub(crate) fn render(
    module: &str,
    header: &str,
    constants: &[(String, u64)],
    entries: &[Entry],
) -> String {
    let mut s = String::new();
    s.push_str(header);
    s.push('\n');
    s.push_str(&format!(
        "// Typed launchers for kernels-cuda/{module}.cu; include with `gpu_runtime::kernels!(\"{module}\")`.\n\n"
    ));
    s.push_str(&format!(
        "::gpu_runtime::launchers! {{\n    module {module:?};\n"
    ));
    let constants: Vec<String> = constants
        .iter()
        .map(|(name, value)| {
            let ty = if *value <= u32::MAX as u64 {
                "u32"
            } else {
                "u64"
            };
            format!("{name}: {ty} = {value}")
        })
        .collect();
    if constants.is_empty() {
        s.push_str("    constants {}\n");
    } else {
        s.push_str(&format!("    constants {{ {} }}\n", constants.join(", ")));
    }
    let families = families(entries);
    let in_family = |name: &str| {
        families
            .iter()
            .any(|f| f.members.iter().any(|(m, _, _)| m == name))
    };
    for e in entries.iter().filter(|e| !in_family(&e.name)) {
        let args: Vec<String> = e
            .params
            .iter()
            .map(|p| arg(p, param_ty(p).unwrap_or_default()))
            .collect();
        s.push_str(&format!(
            "    fn {} {:?} ({});\n",
            e.name,
            e.signature,
            args.join(", ")
        ));
    }
    for f in &families {
        render_family(&mut s, f);
    }
    s.push_str("}\n");
    s
}

/// One launcher argument as `launchers!` takes it: `name: read T`, `write T` or `value T`.
fn arg(p: &Param, ty: &str) -> String {
    match p {
        Param::Read { name, .. } => format!("{name}: read {ty}"),
        Param::Write { name, .. } => format!("{name}: write {ty}"),
        Param::Value { name, .. } => format!("{name}: value {ty}"),
        Param::Struct { name, ty } => format!("{name}: value super::{ty}"),
    }
}

/// One generic launcher for a family of entries: the members with the types (or word
/// widths) that select each, then the arguments.
fn render_family(s: &mut String, f: &Family) {
    let groups = f.members[0].2.len();
    let names: Vec<String> = (0..groups).map(generic_name).collect();
    let (how, phrase) = if f.by_width {
        ("width", "whose word widths (`w32`, `w64`) are the sizes of")
    } else {
        ("exact", "that takes exactly")
    };
    let members: Vec<String> = f
        .members
        .iter()
        .map(|(member, signature, types)| {
            let (tests, with): (Vec<String>, Vec<String>) = names
                .iter()
                .zip(types)
                .map(|(n, t)| {
                    if f.by_width {
                        let bytes = rust_size(t).unwrap_or(0);
                        (format!("{n} {bytes}"), format!("`{n}` of {bytes} bytes"))
                    } else {
                        (format!("{n} {t}"), format!("`{n} = {t}`"))
                    }
                })
                .unzip();
            let doc = format!("{}: `{signature}`", with.join(", "));
            format!("{member} ({}) {doc:?}", tests.join(", "))
        })
        .collect();
    let args: Vec<String> = f
        .slots
        .iter()
        .map(|slot| match slot {
            Slot::Fixed(p) => arg(p, param_ty(p).unwrap_or_default()),
            Slot::Generic { param, group } => arg(param, &names[*group]),
        })
        .collect();
    s.push_str(&format!(
        "    family {}<{}> by {how} {phrase:?} [{}] ({});\n",
        f.name,
        names.join(", "),
        members.join(", "),
        args.join(", ")
    ));
}

/// Checks the parsed parameters against the PTX's `.param` sizes; returns the struct sizes the
/// generated code must assert.
fn check_sizes(
    module: &str,
    entries: &[Entry],
    ptx: &BTreeMap<String, Vec<usize>>,
) -> Result<Vec<(String, usize)>> {
    let mut structs = Vec::new();
    for e in entries {
        let Some(sizes) = ptx.get(&e.name) else {
            bail!(
                "kernel `{}` of {module}.cu is not in ptx/{module}.ptx (run `cargo xtask kernels`)",
                e.name
            );
        };
        // gpu-runtime's `Launch` holds the arguments inline: 32 of them, 64 words of 8 bytes.
        let words: usize = sizes.iter().map(|s| s.div_ceil(8).max(1)).sum();
        if sizes.len() > 32 || words > 64 {
            bail!(
                "kernel `{}` takes {} parameters in {words} words; gpu-runtime's launch holds 32 in 64 (raise MAX_ARGS/MAX_WORDS in launch.rs)",
                e.name,
                sizes.len()
            );
        }
        if sizes.len() != e.params.len() {
            bail!(
                "kernel `{}`: the source declares {} parameters, the PTX {}",
                e.name,
                e.params.len(),
                sizes.len()
            );
        }
        for (p, &size) in e.params.iter().zip(sizes) {
            let want = match p {
                Param::Read { .. } | Param::Write { .. } => Some(8),
                Param::Value { ty, .. } => rust_size(ty),
                Param::Struct { ty, .. } => {
                    structs.push((ty.clone(), size));
                    None
                }
            };
            if let Some(w) = want
                && w != size
            {
                {
                    bail!(
                        "kernel `{}`, parameter `{}`: {w} bytes in Rust, {size} in the PTX",
                        e.name,
                        p.name()
                    );
                }
            }
        }
    }
    structs.sort();
    structs.dedup();
    Ok(structs)
}

/// Generates (or, with `check`, verifies) `kernels-cuda/ptx/<module>.rs` for every module.
pub(crate) fn write_or_check(
    root: &Path,
    modules: &[(String, PathBuf)],
    check: bool,
) -> Result<()> {
    let src_dir = root.join("kernels-cuda");
    let mut problems = Vec::new();
    for (module, ptx_path) in modules {
        let cu = format!("{module}.cu");
        let source = fs::read_to_string(src_dir.join(&cu))?;
        let pre = preprocess(&src_dir, &cu)?;
        let entries = parse_entries(&pre).with_context(|| format!("kernels-cuda/{cu}"))?;
        let ptx = fs::read_to_string(ptx_path)?;
        let sizes = ptx_param_sizes(&ptx)?;
        if sizes.len() != entries.len() {
            let missing: Vec<_> = sizes
                .keys()
                .filter(|k| !entries.iter().any(|e| &e.name == *k))
                .collect();
            bail!("kernels-cuda/{cu}: entries in the PTX the generator did not find: {missing:?}");
        }
        let structs = check_sizes(module, &entries, &sizes)?;
        let constants = shared_values(root, &src_dir, &cu, &shared_names(&source))?;
        let header = ptx
            .lines()
            .next()
            .unwrap_or_default()
            .replace(".ptx", ".rs");
        let mut text = render(module, &header, &constants, &entries);
        for (ty, size) in structs {
            text.push_str(&format!(
                "\nconst _: () = assert!(::std::mem::size_of::<super::{ty}>() == {size}, \"super::{ty} must mirror the CUDA struct ({size} bytes)\");\n"
            ));
        }
        let out = root.join("kernels-cuda/ptx").join(format!("{module}.rs"));
        let current = fs::read_to_string(&out).unwrap_or_default();
        if current != text {
            if check {
                problems.push(format!("{} is missing or stale", out.display()));
            } else {
                fs::write(&out, text)?;
                println!(
                    "launchers: wrote {}",
                    out.strip_prefix(root).unwrap_or(&out).display()
                );
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "{}\nrun `cargo xtask kernels` and commit kernels-cuda/ptx/",
            problems.join("\n")
        );
    }
    println!("launchers: {} module(s) up to date", modules.len());
    Ok(())
}

#[cfg(test)]
mod tests;

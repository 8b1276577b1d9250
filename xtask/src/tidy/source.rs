//! Rust source reduced to its code: comments and the contents of string and character
//! literals blanked, so that the checks that follow see only real paths and real braces.

/// `text` with every comment (line, block, nested block, doc) and the contents of every
/// string, raw string, byte string and character literal replaced by spaces. Newlines stay,
/// so line numbers stay; the quotes of a literal stay, so `"x"` reads as `" "`. Lifetimes
/// (`'a`) are code and stay.
pub(crate) fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&c, i) {
            // r"..." / r#"..."# / br"...": everything up to the quote and as many hashes
            let open = i + 1 + (c[i] == 'b') as usize + hashes;
            out.extend(&c[i..=open]);
            i = open + 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|h| c.get(i + h) == Some(&'#')) {
                    out.extend(&c[i..=i + hashes]);
                    i += hashes + 1;
                    break;
                }
                out.push(blank(c[i]));
                i += 1;
            }
        } else if ch == '"' {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' && i + 1 < c.len() {
                    out.push(' ');
                    i += 1;
                }
                out.push(blank(c[i]));
                i += 1;
            }
            if i < c.len() {
                out.push('"');
                i += 1;
            }
        } else if ch == '\'' && literal_may_start(&c, i) && char_literal_len(&c, i) > 0 {
            let len = char_literal_len(&c, i);
            out.push('\'');
            out.extend(std::iter::repeat_n(' ', len - 2));
            out.push('\'');
            i += len;
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

/// Whether a character literal may start at the quote at `i`: not right after an identifier
/// (`x'`), except the `b` of a byte literal (`b'{'`).
fn literal_may_start(c: &[char], i: usize) -> bool {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i == 1 || !ident(c[i - 2])))
}

/// The number of `#` of a raw string literal starting at `i` (`r`, `br`), if one does.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some(hashes)
}

/// The length of the character literal starting with the quote at `i`, 0 for a lifetime.
fn char_literal_len(c: &[char], i: usize) -> usize {
    match (c.get(i + 1), c.get(i + 2)) {
        (Some('\\'), _) => {
            // an escape: up to the closing quote ('\n', '\'', '\u{1F600}')
            let mut j = i + 3;
            while j < c.len() && c[j] != '\'' && c[j] != '\n' {
                j += 1;
            }
            if c.get(j) == Some(&'\'') {
                j + 1 - i
            } else {
                0
            }
        }
        (Some(_), Some('\'')) => 3,
        _ => 0,
    }
}

/// One token of blanked code: an identifier (keywords included), `::`, or one other
/// character that is not white space; with its 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub(crate) text: &'a str,
    pub(crate) line: usize,
}

/// The tokens of `code` (the output of [`code_only`]): identifiers and numbers as one token,
/// `::` as one, any other character alone.
pub(crate) fn tokens(code: &str) -> Vec<Token<'_>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let ch = b[i];
        if ch == b'\n' {
            line += 1;
            i += 1;
        } else if ch.is_ascii_whitespace() {
            i += 1;
        } else if ch.is_ascii_alphanumeric() || ch == b'_' || ch >= 0x80 {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            out.push(Token {
                text: &code[start..i],
                line,
            });
        } else if ch == b':' && b.get(i + 1) == Some(&b':') {
            out.push(Token { text: "::", line });
            i += 2;
        } else {
            out.push(Token {
                text: &code[i..i + 1],
                line,
            });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{code_only, tokens};

    #[test]
    fn tokens_keep_paths_and_lines() {
        let t = tokens("use crate::a::{B, c};\nfn f() {}");
        let text: Vec<&str> = t.iter().map(|t| t.text).collect();
        assert_eq!(
            text,
            [
                "use", "crate", "::", "a", "::", "{", "B", ",", "c", "}", ";", "fn", "f", "(", ")",
                "{", "}"
            ]
        );
        assert_eq!((t[10].line, t[11].line), (1, 2));
    }

    #[test]
    fn comments_and_literals_are_blanked_lines_kept() {
        let src = "let a = \"{crate::x}\"; // crate::y {\n/* a /* nested */ } */ let b = '{';\n";
        let out = code_only(src);
        assert_eq!(out.lines().count(), 2);
        assert!(!out.contains("crate::"), "{out}");
        assert_eq!(out.matches('{').count(), 0, "{out}");
        assert!(out.contains("let b = ' ';"), "{out}");
    }

    #[test]
    fn raw_strings_escapes_and_lifetimes() {
        let src = "f(r#\"a \"} b\"#, b\"\\\"{\", '\\'', '\\u{7b}', b'{'); fn g<'a>(x: &'a u8) {}";
        let out = code_only(src);
        assert_eq!(out.matches('{').count(), 1, "{out}");
        assert_eq!(out.matches('}').count(), 1, "{out}");
        assert!(out.contains("fn g<'a>(x: &'a u8) {}"), "{out}");
        assert_eq!(out.len(), src.len());
    }
}

//! Module cycles (ARCHITECTURE.md's invariant 6): the graph of references between the
//! top-level modules of each crate, and its cycles.
//!
//! A node is a top-level module of a crate: a file `src/a.rs`, or a folder `src/a/` (with its
//! `mod.rs` or `src/a.rs` and every file below), so a child that refers to its own parent
//! makes no edge. An edge `a -> b` is a path in `a`'s code that leads into `b`:
//! `crate::b::..`, `crate::{b::.., ..}`, `super::` chains that climb out of `a` into `b`, and
//! `crate::Name` where the crate root re-exports `Name` from `b` (`pub use b::Name`). The
//! crate root itself is no node (it declares every module), nor is anything under `src/bin/`
//! (each file there is a crate of its own). Comments and literals do not count, nor does test
//! code (items under `#[cfg(test)]`, files named `tests.rs`): a test may use any module as
//! its oracle, since nothing imports it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::source::{Token, code_only, tokens};

/// The top-level module graph of one crate: `(from, to) -> where`, each place a
/// `file:line` of a reference.
#[derive(Debug, Default)]
pub(crate) struct ModuleGraph {
    pub(crate) edges: BTreeMap<(String, String), Vec<String>>,
}

/// One cycle: the modules of a strongly connected component of the graph, a shortest cycle
/// through it, and every reference between its modules.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Cycle {
    /// The modules, sorted.
    pub(crate) modules: Vec<String>,
    /// A shortest cycle through the first module, which it starts and ends.
    pub(crate) path: Vec<String>,
    /// `(from, to, places)` for every edge between two of the modules.
    pub(crate) edges: Vec<(String, String, Vec<String>)>,
}

/// The module path of a file from its path under `src` (`a.rs`, `a/mod.rs` -> `[a]`;
/// `a/b.rs` -> `[a, b]`; `lib.rs`, `main.rs` -> `[]`); `None` under `bin/` and for test
/// files (`tests.rs`).
fn module_path(rel: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.len() > 1 && parts[0] == "bin" {
        return None;
    }
    if parts.len() == 1 && (parts[0] == "lib.rs" || parts[0] == "main.rs") {
        return Some(Vec::new());
    }
    if parts.last() == Some(&"tests.rs") {
        return None;
    }
    let mut path: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    let last = path.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if stem != "mod" {
        path.push(stem.to_string());
    }
    Some(path)
}

/// The graph of a crate's files: `(path under src, display name, text)`.
pub(crate) fn module_graph(files: &[(String, String, String)]) -> ModuleGraph {
    let mut modules = BTreeSet::new();
    let mut sources = Vec::new();
    let mut root_code = Vec::new();
    for (rel, shown, text) in files {
        let Some(path) = module_path(rel) else {
            continue;
        };
        let code = code_only(text);
        if path.is_empty() {
            root_code.push(code);
        } else {
            modules.insert(path[0].clone());
            sources.push((path, shown.as_str(), code));
        }
    }
    let mut reexports = BTreeMap::new();
    for code in &root_code {
        reexports_of(&tokens(code), &modules, &mut reexports);
    }
    let mut graph = ModuleGraph::default();
    for (path, shown, code) in &sources {
        for (to, line) in references(&tokens(code), path, &modules, &reexports) {
            if to == path[0] {
                continue;
            }
            let at = format!("{shown}:{line}");
            let places = graph.edges.entry((path[0].clone(), to)).or_default();
            if places.last() != Some(&at) {
                places.push(at);
            }
        }
    }
    graph
}

/// Adds the names a crate root re-exports from its modules (`pub use a::{B, c::D as E}`:
/// `B` and `E` from `a`) to `out`.
fn reexports_of(t: &[Token<'_>], modules: &BTreeSet<String>, out: &mut BTreeMap<String, String>) {
    let mut depth = 0usize;
    let mut i = 0;
    while i < t.len() {
        match t[i].text {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "use" if depth == 0 => {
                let end = (i..t.len()).find(|&j| t[j].text == ";").unwrap_or(t.len());
                let mut tree: Vec<&str> = t[i + 1..end].iter().map(|t| t.text).collect();
                while matches!(tree.first(), Some(&("crate" | "self" | "::"))) {
                    tree.remove(0);
                }
                if let Some(m) = tree.first().filter(|m| modules.contains(**m)) {
                    for (j, name) in tree.iter().enumerate().skip(1) {
                        let leaf = matches!(tree.get(j + 1), None | Some(&("," | "}")));
                        if leaf && is_ident(name) && *name != "self" {
                            out.insert(name.to_string(), m.to_string());
                        }
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The top-level modules that the code of the file at module path `file` refers to, with
/// the lines.
fn references(
    t: &[Token<'_>],
    file: &[String],
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    // inline modules (`mod tests { .. }`): name and the brace depth they opened at
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let resolve = |abs: Vec<String>| -> Option<String> {
        let first = abs.first()?;
        if modules.contains(first) {
            Some(first.clone())
        } else if abs.len() == 1 {
            reexports.get(first).cloned()
        } else {
            None
        }
    };
    let mut i = 0;
    while i < t.len() {
        if let Some(end) = test_item_end(t, i) {
            i = end;
            continue;
        }
        let after_path = i > 0 && t[i - 1].text == "::";
        match t[i].text {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|m| m.1 == depth) {
                    inline.pop();
                }
            }
            "mod" if t.get(i + 2).is_some_and(|x| x.text == "{") => {
                inline.push((t[i + 1].text.to_string(), depth));
            }
            "crate" | "super" if !after_path && t.get(i + 1).is_some_and(|x| x.text == "::") => {
                // the absolute path the chain starts from
                let mut base: Option<Vec<String>> = Some(Vec::new());
                let mut j = i;
                if t[i].text == "super" {
                    let mut here: Vec<String> = file.to_vec();
                    here.extend(inline.iter().map(|m| m.0.clone()));
                    while t.get(j).is_some_and(|x| x.text == "super")
                        && t.get(j + 1).is_some_and(|x| x.text == "::")
                    {
                        base = base.and(here.pop().map(|_| here.clone()));
                        j += 2;
                    }
                } else {
                    j += 2;
                }
                let Some(base) = base else {
                    i = j;
                    continue;
                };
                for name in first_segments(&t[j..]) {
                    let mut abs = base.clone();
                    if name != "self" && name != "*" {
                        abs.push(name.to_string());
                    }
                    if let Some(m) = resolve(abs) {
                        out.push((m, t[i].line));
                    }
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// When a `#[cfg(test)]` attribute (or a `cfg` that needs `test`) starts at `i`: the index
/// after the item it guards (its closing brace, or its `;`).
fn test_item_end(t: &[Token<'_>], i: usize) -> Option<usize> {
    let text = |j: usize| t.get(j).map_or("", |x| x.text);
    if text(i) != "#" || text(i + 1) != "[" || text(i + 2) != "cfg" {
        return None;
    }
    let close = (i..t.len()).find(|&j| t[j].text == "]")?;
    let words: Vec<&str> = t[i + 3..close].iter().map(|x| x.text).collect();
    if !words.contains(&"test") || words.contains(&"not") || words.contains(&"any") {
        return None;
    }
    let mut depth = 0;
    for (j, x) in t.iter().enumerate().skip(close + 1) {
        match x.text {
            ";" if depth == 0 => return Some(j + 1),
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    Some(t.len())
}

/// The first segment of each path a path tail starts: `a::..` -> `[a]`, `{a::b, C}` ->
/// `[a, C]`.
fn first_segments<'a>(t: &[Token<'a>]) -> Vec<&'a str> {
    match t.first().map(|x| x.text) {
        Some("{") => {
            let mut out = Vec::new();
            let mut depth = 0;
            let mut start = true;
            for x in &t[1..] {
                match x.text {
                    "{" => depth += 1,
                    "}" if depth == 0 => break,
                    "}" => depth -= 1,
                    "," if depth == 0 => start = true,
                    s if start => {
                        out.push(s);
                        start = false;
                    }
                    _ => {}
                }
            }
            out
        }
        Some(s) => vec![s],
        None => Vec::new(),
    }
}

/// The cycles of a graph: one per strongly connected component of two modules or more.
pub(crate) fn cycles(graph: &ModuleGraph) -> Vec<Cycle> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in graph.edges.keys() {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    let mut out = Vec::new();
    for scc in components(&next) {
        if scc.len() < 2 {
            continue;
        }
        let inside: BTreeSet<&str> = scc.iter().copied().collect();
        let edges = graph
            .edges
            .iter()
            .filter(|((a, b), _)| inside.contains(a.as_str()) && inside.contains(b.as_str()))
            .map(|((a, b), at)| (a.clone(), b.clone(), at.clone()))
            .collect();
        out.push(Cycle {
            modules: inside.iter().map(|m| m.to_string()).collect(),
            path: shortest_cycle(&next, &inside),
            edges,
        });
    }
    out
}

/// The strongly connected components (Tarjan), each sorted.
fn components<'a>(next: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    struct State<'a, 'g> {
        next: &'g BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a, '_>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, (n, n));
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in &s.next[v] {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.index[w].1.min(s.index[v].1);
                s.index.get_mut(v).expect("visited").1 = low;
            } else if s.on_stack.contains(w) {
                let low = s.index[w].0.min(s.index[v].1);
                s.index.get_mut(v).expect("visited").1 = low;
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w);
                if w == v {
                    break;
                }
            }
            scc.sort_unstable();
            s.out.push(scc);
        }
    }
    let mut s = State {
        next,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for &v in next.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// A shortest cycle through the first module of a component (breadth-first inside it).
fn shortest_cycle(next: &BTreeMap<&str, Vec<&str>>, inside: &BTreeSet<&str>) -> Vec<String> {
    let Some(&start) = inside.iter().next() else {
        return Vec::new();
    };
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &next[v] {
            if !inside.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.to_string()];
                let mut at = v;
                while at != start {
                    path.push(at.to_string());
                    at = parent[at];
                }
                path.push(start.to_string());
                path.reverse();
                return path;
            }
            if !parent.contains_key(w) {
                parent.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        let files: Vec<(String, String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), format!("src/{p}"), t.to_string()))
            .collect();
        module_graph(&files)
    }

    fn edges(g: &ModuleGraph) -> Vec<(&str, &str)> {
        g.edges
            .keys()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    #[test]
    fn paths_groups_supers_and_reexports_make_edges() {
        let g = graph(&[
            (
                "lib.rs",
                "mod a; mod b; mod c; mod d;\npub use d::{Thing, other::Deep as Alias};",
            ),
            (
                "a.rs",
                "use crate::b::X;\nuse crate::{c::Y, Thing};\nfn f() { crate::Alias::new() }",
            ),
            ("b/mod.rs", "mod inner;\nuse super::c::Z;"),
            (
                "b/inner.rs",
                "use super::Local;\nuse super::super::a::W;\nuse crate::b::Q;",
            ),
            (
                "c.rs",
                "//! see crate::a\nconst S: &str = \"crate::a::x\";\n#[cfg(test)]\nmod tests { use super::*; use crate::a::T; }",
            ),
            ("c/tests.rs", "use crate::a::T;"),
            ("d.rs", "pub(crate) fn g() {}"),
            ("bin/tool.rs", "use crate::a;"),
        ]);
        assert_eq!(
            edges(&g),
            [("a", "b"), ("a", "c"), ("a", "d"), ("b", "a"), ("b", "c")]
        );
        assert_eq!(g.edges[&("b".into(), "a".into())], ["src/b/inner.rs:2"]);
        assert_eq!(
            g.edges[&("a".into(), "d".into())],
            ["src/a.rs:2", "src/a.rs:3"]
        );
    }

    #[test]
    fn a_cycle_is_found_with_its_references_and_a_shortest_path() {
        let g = graph(&[
            (
                "lib.rs",
                "mod glue; mod pieces; mod unitigs; mod store; mod kmer;",
            ),
            (
                "glue.rs",
                "use crate::pieces::Pieces; use crate::kmer::Word;",
            ),
            ("pieces.rs", "use crate::unitigs::NONE;"),
            ("unitigs.rs", "fn f(u: &crate::store::Stored) {}"),
            (
                "store.rs",
                "use crate::glue::Runs;\nuse crate::unitigs::Link;",
            ),
            ("kmer.rs", ""),
        ]);
        let c = cycles(&g);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].modules, ["glue", "pieces", "store", "unitigs"]);
        assert_eq!(c[0].path, ["glue", "pieces", "unitigs", "store", "glue"]);
        assert_eq!(c[0].edges.len(), 5);
        assert!(c[0].edges.contains(&(
            "store".into(),
            "unitigs".into(),
            vec!["src/store.rs:2".into()]
        )));
    }

    #[test]
    fn no_cycle_when_the_shared_type_sits_below() {
        let g = graph(&[
            ("lib.rs", "mod a; mod b; mod shared;"),
            ("a.rs", "use crate::shared::T; use crate::b::f;"),
            ("b.rs", "use crate::shared::T;"),
            ("shared.rs", ""),
        ]);
        assert!(cycles(&g).is_empty());
    }

    #[test]
    fn two_separate_cycles_are_two_reports() {
        let g = graph(&[
            ("lib.rs", ""),
            ("a.rs", "use crate::b::X;"),
            ("b.rs", "use crate::a::X;"),
            ("c.rs", "use crate::d::X;"),
            ("d.rs", "use crate::c::X;"),
        ]);
        let c = cycles(&g);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].path.as_slice(), c[1].path.as_slice()),
            (
                ["a", "b", "a"].map(String::from).as_slice(),
                ["c", "d", "c"].map(String::from).as_slice()
            )
        );
    }
}

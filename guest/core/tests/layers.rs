//! The core's modules sit in three layers, `format` ← `kafka` ← `protocol` (`src/lib.rs`): a
//! module imports only from its own layer and the ones below it, and no import cycle joins
//! modules. This test reads the product sources (test modules, `#[cfg(test)]` items, comments
//! and string literals left out), builds the module graph from their `crate::…`, `super::…` and
//! `self::…` paths, and fails naming the cycle or the upward import it finds.
//!
//! A module is a direct child of a layer folder: `format/plan.rs` is `format::plan`, and every
//! file under `kafka/policy/` belongs to `kafka::policy`. Root re-exports (`crate::plan`) resolve
//! to the module they re-export.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first; a module may import from its own layer and those before it.
const LAYERS: [&str; 3] = ["format", "kafka", "protocol"];

/// One product source file: its module path inside the crate and its text.
struct Source {
    file: String,
    /// The file's module path, e.g. `["kafka", "policy", "control"]`.
    path: Vec<String>,
    text: String,
}

#[test]
fn core_modules_form_layers_without_import_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    check_root(&src);
    let sources = product_sources(&src);
    let graph = build_graph(&sources).unwrap_or_else(|e| panic!("{e}"));
    // Not vacuous: every module of every layer is in the graph, and the graph has its edges.
    let declared: usize = LAYERS
        .iter()
        .map(|layer| declared_modules(&src.join(layer).join("mod.rs")).len())
        .sum();
    assert_eq!(
        graph.modules.len(),
        declared,
        "modules found: {:?}",
        graph.modules
    );
    assert!(
        graph.edges.len() > 50,
        "only {} imports found between core modules; is the source reader broken?",
        graph.edges.len()
    );
    assert!(
        graph
            .edges
            .contains_key(&("protocol::apply".into(), "kafka::policy".into()))
    );
    if let Err(e) = graph.check() {
        panic!("{e}");
    }
}

#[test]
fn a_planted_cycle_is_named() {
    let graph = build_graph(&[
        source("format/a.rs", "use crate::b::Thing;\npub struct A;"),
        source(
            "format/b.rs",
            "pub struct Thing;\nfn f() { crate::format::c::g(); }",
        ),
        source("format/c.rs", "use super::a::A;\npub fn g() {}"),
    ])
    .unwrap();
    let error = graph.check().unwrap_err();
    assert!(
        error.contains("format::a -> format::b -> format::c -> format::a"),
        "{error}"
    );
}

#[test]
fn an_import_from_a_higher_layer_is_named() {
    let graph = build_graph(&[
        source("format/plan.rs", "use crate::{offsets, policy::Policy};"),
        source("format/offsets.rs", ""),
        source("kafka/policy/mod.rs", "use crate::plan::Plan;"),
    ])
    .unwrap();
    let error = graph.check().unwrap_err();
    assert!(
        error.contains("format::plan imports kafka::policy (src/format/plan.rs:1)"),
        "{error}"
    );
    assert!(
        error.contains("format::plan -> kafka::policy -> format::plan"),
        "{error}"
    );
}

#[test]
fn test_code_comments_and_strings_do_not_count() {
    let graph = build_graph(&[
        source(
            "format/a.rs",
            concat!(
                "//! See `crate::b::X`.\n",
                "/* crate::b::Y */\n",
                "const S: &str = \"crate::b::Z {\";\n",
                "const R: &str = r#\"crate::b::W\"#;\n",
                "const C: char = '{';\n",
                "fn f<'a>(x: &'a str) -> &'a str { x }\n",
                "#[cfg(test)]\n",
                "#[allow(dead_code)]\n",
                "mod tests { use crate::b::X; fn g() { let _ = \"}\"; } }\n",
                "#[cfg(test)]\n",
                "use crate::b::Y;\n",
                "pub fn h() {}\n",
            ),
        ),
        source("format/b.rs", "use crate::a::h;"),
    ])
    .unwrap();
    assert_eq!(graph.edges.len(), 1, "{:?}", graph.edges);
    graph.check().unwrap();
}

#[test]
fn an_unknown_crate_path_is_refused() {
    let error = build_graph(&[source("format/a.rs", "use crate::Plan;")])
        .err()
        .unwrap();
    assert!(error.contains("crate::Plan"), "{error}");
}

#[test]
fn a_function_added_to_another_modules_type_is_an_edge() {
    let graph = build_graph(&[
        source(
            "format/a.rs",
            "pub struct A;\nimpl A {\n    pub fn g() {\n        Self::f()\n    }\n}",
        ),
        source(
            "format/b.rs",
            "use crate::a::A;\nimpl A {\n    pub fn f() {}\n}",
        ),
    ])
    .unwrap();
    let error = graph.check().unwrap_err();
    assert!(
        error.contains("format::a -> format::b -> format::a"),
        "{error}"
    );
    assert!(error.contains("src/format/a.rs:4"), "{error}");
    let graph = build_graph(&[
        source(
            "format/a.rs",
            "pub struct A;\nfn g(a: A) -> A {\n    a.f()\n}",
        ),
        source(
            "format/b.rs",
            "impl crate::a::A {\n    pub fn f(self) -> Self { self }\n}",
        ),
    ])
    .unwrap();
    let error = graph.check().unwrap_err();
    assert!(
        error.contains("format::a -> format::b -> format::a"),
        "{error}"
    );
    assert!(error.contains("src/format/a.rs:3"), "{error}");
}

fn source(file: &str, text: &str) -> Source {
    Source {
        file: format!("src/{file}"),
        path: module_path(Path::new(file)),
        text: text.into(),
    }
}

/// The root holds only `lib.rs`, the layer folders and test-only modules declared `#[cfg(test)]`.
fn check_root(src: &Path) {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let lines: Vec<&str> = lib.lines().collect();
    let mut declared = BTreeSet::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'))
        else {
            continue;
        };
        let test_only = i > 0 && lines[i - 1].trim() == "#[cfg(test)]";
        assert!(
            LAYERS.contains(&name) || test_only,
            "src/lib.rs declares module {name} outside the layers {LAYERS:?}; move it into one"
        );
        declared.insert(name.to_string());
    }
    for entry in fs::read_dir(src).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let module = name.strip_suffix(".rs").unwrap_or(&name);
        assert!(
            module == "lib" || declared.contains(module),
            "src/{name} is not a module declared in src/lib.rs"
        );
    }
}

/// The `pub mod` names a layer's `mod.rs` declares.
fn declared_modules(mod_rs: &Path) -> Vec<String> {
    fs::read_to_string(mod_rs)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(String::from)
        .collect()
}

fn product_sources(src: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    for layer in LAYERS {
        collect_rs(&src.join(layer), &mut files);
    }
    files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap();
            Source {
                file: format!("src/{}", relative.display()),
                path: module_path(relative),
                text: fs::read_to_string(&file).unwrap(),
            }
        })
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `format/plan.rs` → `[format, plan]`; `kafka/policy/mod.rs` → `[kafka, policy]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

struct Graph {
    modules: BTreeSet<String>,
    /// (from, to) → where the first such import is, `file:line`.
    edges: BTreeMap<(String, String), String>,
}

fn layer_rank(module: &str) -> usize {
    let layer = module.split("::").next().unwrap();
    LAYERS.iter().position(|l| *l == layer).unwrap()
}

fn build_graph(sources: &[Source]) -> Result<Graph, String> {
    // The module key (`layer::module`) of every module, by its own name, for root re-exports.
    let mut modules = BTreeSet::new();
    let mut by_name = BTreeMap::new();
    for s in sources {
        if s.path.len() >= 2 {
            let key = format!("{}::{}", s.path[0], s.path[1]);
            if let Some(other) = by_name.insert(s.path[1].clone(), key.clone())
                && other != key
            {
                return Err(format!(
                    "two core modules are named {}: {other} and {key}",
                    s.path[1]
                ));
            }
            modules.insert(key);
        }
    }
    // Product code of each module, and the types each module defines.
    let mut code_of: Vec<(&Source, String, String)> = Vec::new();
    let mut defined: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in sources {
        if s.path.len() < 2 {
            continue; // a layer's mod.rs only declares its modules
        }
        let from = format!("{}::{}", s.path[0], s.path[1]);
        let code = without_test_items(&code_only(&s.text));
        for name in defined_types(&code) {
            defined.entry(name).or_default().insert(from.clone());
        }
        code_of.push((s, from, code));
    }
    // Functions a module adds to a type another module defines (`impl Plan` in `parse`, `impl
    // KafkaError` in `kafka_codes`): calling `Plan::parse` depends on the module that defines
    // it, import or not.
    // (type, function, whether it takes self, module)
    let mut foreign: Vec<(String, String, bool, String)> = Vec::new();
    for (_, from, code) in &code_of {
        for (ty, functions) in inherent_impls(code) {
            let Some(owners) = defined.get(&ty) else {
                continue;
            };
            if owners.contains(from) {
                continue;
            }
            for (function, takes_self) in functions {
                foreign.push((ty.clone(), function, takes_self, from.clone()));
            }
        }
    }
    let mut edges = BTreeMap::new();
    for (s, from, code) in &code_of {
        let from = from.clone();
        for (ty, function, takes_self, owner) in &foreign {
            let mut needles = vec![format!("{ty}::{function}")];
            if *takes_self {
                // A method call names no type: any `.function(` counts (this may see an edge
                // that is not there, never miss one).
                needles.push(format!(".{function}("));
            }
            if defined.get(ty).is_some_and(|d| d.contains(&from)) {
                needles.push(format!("Self::{function}"));
            }
            for needle in needles {
                if let Some(line) = find_word(code, &needle)
                    && *owner != from
                {
                    edges
                        .entry((from.clone(), owner.clone()))
                        .or_insert_with(|| format!("{}:{line}", s.file));
                }
            }
        }
        for (line, path) in paths(code) {
            let Some(absolute) = absolute(&s.path, &path) else {
                continue;
            };
            let to = match absolute.as_slice() {
                [layer, module, ..] if LAYERS.contains(&layer.as_str()) => {
                    format!("{layer}::{module}")
                }
                [name, ..] if by_name.contains_key(name) => by_name[name].clone(),
                [layer] if LAYERS.contains(&layer.as_str()) => continue,
                _ => {
                    return Err(format!(
                        "{}:{line}: crate::{} names no core module; import from the module itself",
                        s.file,
                        absolute.join("::")
                    ));
                }
            };
            if !modules.contains(&to) {
                return Err(format!("{}:{line}: {to} is not a core module", s.file));
            }
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_insert_with(|| format!("{}:{line}", s.file));
            }
        }
    }
    Ok(Graph { modules, edges })
}

impl Graph {
    fn check(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        for ((from, to), at) in &self.edges {
            if layer_rank(to) > layer_rank(from) {
                problems.push(format!(
                    "{from} imports {to} ({at}), a higher layer (layers, lowest first: {LAYERS:?})"
                ));
            }
        }
        for cycle in self.cycles() {
            let at: Vec<&str> = cycle
                .windows(2)
                .map(|w| self.edges[&(w[0].clone(), w[1].clone())].as_str())
                .collect();
            problems.push(format!(
                "import cycle among core modules: {} (at {})",
                cycle.join(" -> "),
                at.join(", ")
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// One cycle through each strongly connected component of more than one module, as a path
    /// that starts and ends at the component's first module.
    fn cycles(&self) -> Vec<Vec<String>> {
        let next = |m: &str| -> Vec<String> {
            self.edges
                .keys()
                .filter(|(from, _)| from == m)
                .map(|(_, to)| to.clone())
                .collect()
        };
        let reach = |start: &str| -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start.to_string()];
            while let Some(m) = todo.pop() {
                for n in next(&m) {
                    if seen.insert(n.clone()) {
                        todo.push(n);
                    }
                }
            }
            seen
        };
        let reachable: BTreeMap<&String, BTreeSet<String>> =
            self.modules.iter().map(|m| (m, reach(m))).collect();
        let mut done = BTreeSet::new();
        let mut cycles = Vec::new();
        for m in &self.modules {
            if done.contains(m) || !reachable[m].contains(m) {
                continue;
            }
            let component: BTreeSet<&String> = self
                .modules
                .iter()
                .filter(|n| reachable[m].contains(*n) && reachable[*n].contains(m))
                .collect();
            done.extend(component.iter().map(|n| (*n).clone()));
            // Shortest way back to `m`, breadth first, inside the component.
            let mut parent: BTreeMap<String, String> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([m.clone()]);
            'search: while let Some(x) = queue.pop_front() {
                for n in next(&x) {
                    if &n == m {
                        let mut path = vec![x.clone()];
                        let mut cur = x;
                        while &cur != m {
                            cur = parent[&cur].clone();
                            path.push(cur.clone());
                        }
                        path.reverse();
                        path.push(m.clone());
                        cycles.push(path);
                        break 'search;
                    }
                    if component.contains(&n) && !parent.contains_key(&n) && &n != m {
                        parent.insert(n.clone(), x.clone());
                        queue.push_back(n);
                    }
                }
            }
        }
        cycles
    }
}

/// Every path after `crate::`, `super::` or `self::` in `code`, with its line, expanded over
/// `use` groups: `crate::{a, b::c}` gives `crate::a` and `crate::b::c`.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':';
        if starts_word && is_ident(chars[i]) {
            let (word, end) = ident(&chars, i);
            if matches!(word.as_str(), "crate" | "super" | "self")
                && chars.get(end) == Some(&':')
                && chars.get(end + 1) == Some(&':')
            {
                let line = chars[..i].iter().filter(|c| **c == '\n').count() + 1;
                let mut found = Vec::new();
                let after = tree(&chars, end, vec![word], &mut found);
                out.extend(found.into_iter().map(|p| (line, p)));
                i = after;
                continue;
            }
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// Reads `::seg::seg…` or `::{…}` after `prefix` starting at `i`; pushes the paths, returns
/// where it stopped.
fn tree(
    chars: &[char],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        let j = skip_space(chars, i);
        if !(chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':')) {
            out.push(prefix);
            return i;
        }
        let k = skip_space(chars, j + 2);
        match chars.get(k) {
            Some('{') => {
                let mut at = k + 1;
                loop {
                    at = skip_space(chars, at);
                    match chars.get(at) {
                        Some('}') | None => return at + 1,
                        Some(',') => at += 1,
                        Some(c) if is_ident(*c) => {
                            let (word, end) = ident(chars, at);
                            if word == "as" {
                                // `x as y`: the new name is no path.
                                at = ident(chars, skip_space(chars, end)).1;
                                continue;
                            }
                            let mut p = prefix.clone();
                            if word != "self" {
                                p.push(word);
                            }
                            at = tree(chars, end, p, out);
                        }
                        Some('*') => {
                            out.push(prefix.clone());
                            at += 1;
                        }
                        Some(_) => at += 1, // `as` renames and the like
                    }
                }
            }
            Some(c) if is_ident(*c) => {
                let (word, end) = ident(chars, k);
                prefix.push(word);
                i = end;
            }
            _ => {
                // `crate::*` or a turbofish: the path so far is the import.
                out.push(prefix);
                return k;
            }
        }
    }
}

/// A `crate`/`super`/`self` path from the file with module path `file` as a path from the crate
/// root, without the leading `crate`; `None` for a path that does not leave the file's module.
fn absolute(file: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = path;
    match path[0].as_str() {
        "crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        _ => {
            base = file.to_vec();
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "self" => {}
                    "super" => {
                        base.pop()?;
                    }
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
    }
    base.extend(rest.iter().cloned());
    if base.is_empty() { None } else { Some(base) }
}

/// The names after `struct`, `enum`, `trait` and `union` in `code`.
fn defined_types(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(chars[i]) && (i == 0 || !is_ident(chars[i - 1])) {
            let (word, end) = ident(&chars, i);
            if matches!(word.as_str(), "struct" | "enum" | "trait" | "union") {
                let at = skip_space(&chars, end);
                let (name, _) = ident(&chars, at);
                if !name.is_empty() {
                    out.push(name);
                }
            }
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// Every inherent `impl Type { … }` in `code`: the type's name and each function in the block
/// with whether it takes `self`.
fn inherent_impls(code: &str) -> Vec<(String, Vec<(String, bool)>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !(is_ident(chars[i]) && (i == 0 || !is_ident(chars[i - 1]))) {
            i += 1;
            continue;
        }
        let (word, end) = ident(&chars, i);
        i = end;
        if word != "impl" {
            continue;
        }
        // The header up to the block: `impl<T> Type<T> where … {`.
        let Some(open) = (end..chars.len()).find(|&k| chars[k] == '{' || chars[k] == ';') else {
            break;
        };
        if chars[open] == ';' {
            continue;
        }
        let header: String = chars[end..open].iter().collect();
        let header = header.split(" where ").next().unwrap().trim();
        let header = match header.strip_prefix('<') {
            Some(rest) => skip_generics(rest),
            None => header,
        };
        let words: Vec<&str> = header
            .split(|c: char| !is_ident(c))
            .filter(|w| !w.is_empty())
            .collect();
        if words.contains(&"for") || header.contains('(') {
            continue; // a trait impl, or `impl Trait` in a signature
        }
        let ty = header.split('<').next().unwrap().trim();
        let ty = ty.rsplit("::").next().unwrap().trim().to_string();
        // The block's functions at depth one.
        let mut depth = 0;
        let mut k = open;
        let mut functions = Vec::new();
        while k < chars.len() {
            match chars[k] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                c if depth == 1 && is_ident(c) && !is_ident(chars[k - 1]) => {
                    let (w, e) = ident(&chars, k);
                    if w == "fn" {
                        let (name, after) = ident(&chars, skip_space(&chars, e));
                        let params_at = (after..chars.len()).find(|&p| chars[p] == '(').unwrap();
                        let params: String = chars[params_at + 1..]
                            .iter()
                            .take_while(|c| **c != ')' && **c != ',')
                            .collect();
                        let takes_self = params.split(|c: char| !is_ident(c)).any(|w| w == "self");
                        functions.push((name, takes_self));
                    }
                    k = e;
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
        if !ty.is_empty() {
            out.push((ty, functions));
        }
        i = k;
    }
    out
}

/// `T> Rest` → `Rest`: what follows the generic parameters of an `impl<…>`.
fn skip_generics(text: &str) -> &str {
    let mut depth = 1;
    for (at, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return text[at + 1..].trim();
                }
            }
            _ => {}
        }
    }
    ""
}

/// The line of the first `needle` in `code` that is a whole path: no identifier character right
/// before a needle that starts with an identifier, no identifier character right
/// after one that ends with one.
fn find_word(code: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = code[from..].find(needle) {
        let at = from + found;
        let before = code[..at].chars().next_back();
        let after = code[at + needle.len()..].chars().next();
        let glued_before = needle.starts_with(is_ident) && before.is_some_and(is_ident);
        let glued_after = needle.ends_with(is_ident) && after.is_some_and(is_ident);
        if !glued_before && !glued_after {
            return Some(code[..at].matches('\n').count() + 1);
        }
        from = at + needle.len();
    }
    None
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ident(chars: &[char], start: usize) -> (String, usize) {
    let mut end = start;
    while end < chars.len() && is_ident(chars[end]) {
        end += 1;
    }
    (chars[start..end].iter().collect(), end)
}

fn skip_space(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && chars[i].is_whitespace() {
        i += 1;
    }
    i
}

/// `text` with comments and the contents of string and character literals blanked (newlines
/// kept, so lines still count).
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied();
        if at(0) == Some('/') && at(1) == Some('/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if at(0) == Some('/') && at(1) == Some('*') {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
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
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if at(0) == Some('r')
            && (i == 0 || !is_ident(c[i - 1]) || c[i - 1] == 'b')
            && matches!(at(1), Some('"') | Some('#'))
            && {
                let mut k = i + 1;
                while c.get(k) == Some(&'#') {
                    k += 1;
                }
                c.get(k) == Some(&'"')
            }
        {
            // Raw string: r#"…"#.
            let mut k = i + 1;
            let mut hashes = 0;
            while c[k] == '#' {
                hashes += 1;
                k += 1;
            }
            out.push('r');
            for _ in 0..hashes {
                out.push('#');
            }
            out.push('"');
            i = k + 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|h| c.get(i + h) == Some(&'#')) {
                    out.push('"');
                    for _ in 0..hashes {
                        out.push('#');
                    }
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(0) == Some('"') {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if at(0) == Some('\'') && (at(1) == Some('\\') || at(2) == Some('\'')) {
            // A character literal ('x', '\n', '\u{7f}'); a lifetime has no closing quote.
            out.push('\'');
            i += 1;
            while i < c.len() && c[i] != '\'' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                out.push(' ');
                i += 1;
            }
            out.push('\'');
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// `code` (already without comments and literals) with every `#[cfg(test)]` item blanked: the
/// attribute, any attributes after it, and the item up to its `;` or its closing brace.
fn without_test_items(code: &str) -> String {
    let mut c: Vec<char> = code.chars().collect();
    let needle: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + needle.len() <= c.len() {
        if c[i..i + needle.len()] != needle[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut k = i + needle.len();
        let mut depth = 0isize;
        let mut opened = false;
        while k < c.len() {
            match c[k] {
                '{' | '[' | '(' => {
                    depth += 1;
                    opened |= c[k] == '{';
                }
                '}' | ']' | ')' => {
                    depth -= 1;
                    if depth < 0 || depth == 0 && opened {
                        break;
                    }
                }
                ';' if depth == 0 => break,
                _ => {}
            }
            k += 1;
        }
        let end = (k + 1).min(c.len());
        for ch in &mut c[start..end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = k + 1;
    }
    c.into_iter().collect()
}

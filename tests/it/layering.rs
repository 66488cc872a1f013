//! The crate's modules form layers that only point down: a module names (`crate::<module>`)
//! only modules of its own layer or below, and no two modules name each other through any
//! chain. Read from the sources (test code aside: `tests.rs` files and whatever follows a
//! file's first `#[cfg(test)]`), so a new upward import fails here, naming the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top to bottom. A module may use modules of its own layer (without a cycle) and below.
const LAYERS: &[&[&str]] = &[
    // The faces: what a binary runs.
    &[
        "run",
        "scanner_cli",
        "serve",
        "web",
        "wizard",
        "self_update",
    ],
    // What every face shares about being a process.
    &["process"],
    // The operator's input, read once by a face and handed down.
    &["settings"],
    // The pipeline and what it writes.
    &["scanner", "verify", "fleet", "notify", "output"],
    &["assess", "verdict"],
    &["checks"],
    &["report"],
    &["probe"],
    &["knowledge", "feeds"],
    // What differs between the products, and their release tracks.
    &["family"],
    &["net", "target"],
    // The base every layer may use.
    &[
        "budget",
        "capped",
        "clock",
        "files",
        "atomic_file",
        "severity",
        "text",
        "diagnostics",
        "redact",
        "program",
    ],
];

/// Every `crate::<module>` a file's non-test code names, by module of the file.
fn imports() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let module = relative
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            if module == "bin"
                || module == "lib"
                || path.extension().is_none_or(|e| e != "rs")
                || path.file_name().is_some_and(|n| n == "tests.rs")
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    found
                        .entry(module.clone())
                        .or_default()
                        .entry(name)
                        .or_default()
                        .insert(relative.clone());
                }
            }
        }
    }
    found
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` is in no layer of tests/it/layering.rs"))
}

#[test]
fn modules_only_import_their_own_layer_or_below() {
    let imports = imports();
    let mut upward = Vec::new();
    for (from, targets) in &imports {
        for (to, files) in targets {
            if layer_of(to) < layer_of(from) {
                upward.push(format!(
                    "{from} -> {to} ({})",
                    files.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "upward imports (a lower layer naming a higher one):\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other_through_any_chain() {
    if let Some(cycle) = cycle_of(&imports()) {
        panic!("an import cycle: {}", cycle.join(" -> "));
    }
}

/// The submodules of `web` and of `serve` have no import cycle among them either.
#[test]
fn no_two_submodules_of_a_face_import_each_other_through_any_chain() {
    for parent in ["web", "serve"] {
        if let Some(cycle) = cycle_of(&submodule_imports(parent)) {
            panic!("an import cycle in {parent}: {}", cycle.join(" -> "));
        }
    }
}

/// Every sibling a submodule of `parent` names (`super::<name>` in `src/<parent>/<name>.rs` or
/// `<name>/mod.rs`, `crate::<parent>::<name>` anywhere in it), by submodule.
fn submodule_imports(parent: &str) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(parent);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            for inner in std::fs::read_dir(&path).unwrap() {
                let inner = inner.unwrap().path();
                let own = inner.file_name().is_some_and(|n| n == "mod.rs");
                files.push((name.clone(), inner, own));
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "mod" && name != "tests" {
            files.push((name, path, true));
        }
    }
    let siblings: BTreeSet<String> = files.iter().map(|(name, ..)| name.clone()).collect();
    let mut found: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let crate_path = format!("crate::{parent}::");
    for (module, path, own) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut named: Vec<String> = code
            .match_indices(&crate_path)
            .map(|(at, _)| identifiers(&code[at + crate_path.len()..]))
            .flat_map(|names| names.into_iter().take(1))
            .collect();
        if *own {
            for (at, _) in code.match_indices("super::") {
                let rest = &code[at + 7..];
                // `super::{a, b::C}` names a and b; `super::a` names a.
                match rest.strip_prefix('{') {
                    Some(group) => named.extend(
                        group[..group.find('}').unwrap_or(0)]
                            .split(',')
                            .flat_map(|item| identifiers(item.trim()).into_iter().take(1)),
                    ),
                    None => named.extend(identifiers(rest).into_iter().take(1)),
                }
            }
        }
        for name in named {
            if name != *module && siblings.contains(&name) {
                found
                    .entry(module.clone())
                    .or_default()
                    .entry(name)
                    .or_default()
                    .insert(path.display().to_string());
            }
        }
    }
    found
}

/// The identifier at the start of `text`, if any.
fn identifiers(text: &str) -> Option<String> {
    let name: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// A cycle of the import graph, if it has one (walked depth first).
fn cycle_of(imports: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Option<Vec<&str>> {
    let graph: BTreeMap<&str, Vec<&str>> = imports
        .iter()
        .map(|(from, targets)| (from.as_str(), targets.keys().map(String::as_str).collect()))
        .collect();
    fn visit<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node);
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, &graph, &mut Vec::new(), &mut done))
}

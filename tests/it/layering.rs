//! The crate's layers are a fact, read from its syntax. Every production file is parsed
//! (`syn`): test items (`#[cfg(test)]`), test-only files and comments are left out. Every path
//! it names counts: each import of a grouped `use`, `super::` chains, `self::`, and inline
//! paths in code and types. Each path is resolved to the file of the module it names.
//!
//! - A module names only modules of its own layer or below.
//! - No face names another face: what faces share sits in a layer below them.
//! - No two files name each other through any chain.
//!
//! `a_violation_of_each_kind_fails` puts one of each into a copy of the sources and sees each
//! rule fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Top to bottom. A module may name modules of its own layer (without a circle) and below,
/// except in the faces' layer, whose modules name none of each other.
const LAYERS: &[&[&str]] = &[
    // The programs: what each binary dispatches to.
    &["run", "scanner_cli"],
    // The faces: none names another.
    &["service", "exporter", "web", "wizard", "self_update"],
    // What the faces share: being a process, and being a server.
    &["process", "server"],
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
        "vocabulary",
    ],
];

/// The layer whose modules name none of each other.
const FACES: usize = 1;

/// A module's path from the crate root (`["web", "store", "redis"]`).
type ModulePath = Vec<String>;

/// The crate's production files and what each names.
#[derive(Default)]
pub(crate) struct Sources {
    /// Every production file and its syntax.
    pub(crate) files: Vec<(PathBuf, syn::File)>,
    /// Every production module (a file, or an inline module of one) and its file.
    modules: BTreeMap<ModulePath, PathBuf>,
    /// File → the files it names.
    names: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// Whether an item is test code: `#[cfg(test)]` (or a `cfg` that needs `test`).
pub(crate) fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && {
            let text = attr
                .meta
                .require_list()
                .map(|list| list.tokens.to_string())
                .unwrap_or_default();
            text.split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|word| word == "test")
        }
    })
}

/// The paths one file names, each as written, with the module it is written in.
#[derive(Default)]
struct Paths {
    /// (the module the path is written in, the path's segments).
    found: Vec<(ModulePath, Vec<String>)>,
    /// The module being visited (the file's, or an inline module inside it).
    module: ModulePath,
}

impl Paths {
    fn add(&mut self, segments: Vec<String>) {
        if !segments.is_empty() {
            self.found.push((self.module.clone(), segments));
        }
    }

    /// Every path of a `use` tree, a group expanded.
    fn use_tree(&mut self, prefix: &[String], tree: &syn::UseTree) {
        let mut path = prefix.to_vec();
        match tree {
            syn::UseTree::Path(p) => {
                path.push(p.ident.to_string());
                self.use_tree(&path, &p.tree);
            }
            syn::UseTree::Name(n) => {
                path.push(n.ident.to_string());
                self.add(path);
            }
            syn::UseTree::Rename(r) => {
                path.push(r.ident.to_string());
                self.add(path);
            }
            syn::UseTree::Glob(_) => self.add(path),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(&path, tree);
                }
            }
        }
    }
}

/// Whether an item is test code (`#[cfg(test)]` on it).
pub(crate) fn is_test_item(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => return false,
    };
    is_test(attrs)
}

/// Whether an item of an `impl` is test code.
pub(crate) fn is_test_impl_item(item: &syn::ImplItem) -> bool {
    matches!(item, syn::ImplItem::Fn(f) if is_test(&f.attrs))
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_item(item) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        if !is_test_impl_item(item) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // An inline module's paths are written in it; `mod x;` is a file of its own.
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&[], &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.add(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }
}

impl Sources {
    /// Reads the crate under `src` from `lib.rs` down, following `mod` declarations that are
    /// not test code.
    pub(crate) fn read(src: &Path) -> Sources {
        let mut sources = Sources::default();
        let mut parsed: Vec<(PathBuf, ModulePath, syn::File)> = Vec::new();
        let mut pending = vec![(src.join("lib.rs"), Vec::new())];
        while let Some((file, module)) = pending.pop() {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let syntax =
                syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // A file's submodules live beside it (lib.rs, mod.rs) or in a folder of its name.
            let dir = match file.file_name().and_then(|n| n.to_str()) {
                Some("lib.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
                _ => file.with_extension(""),
            };
            sources.modules.insert(module.clone(), file.clone());
            declared_modules(
                &syntax.items,
                &module,
                &dir,
                &file,
                &mut |path, at| match at {
                    Some(child) => pending.push((child, path)),
                    None => {
                        sources.modules.insert(path, file.clone());
                    }
                },
            );
            parsed.push((file, module, syntax));
        }
        for (file, module, syntax) in &parsed {
            let mut paths = Paths {
                module: module.clone(),
                ..Paths::default()
            };
            paths.visit_file(syntax);
            let named = sources.names.entry(file.clone()).or_default();
            for (written_in, path) in paths.found {
                if let Some(target) = resolve(&sources.modules, &written_in, &path)
                    && target != *file
                {
                    named.insert(target);
                }
            }
        }
        sources.files = parsed
            .into_iter()
            .map(|(file, _, syntax)| (file, syntax))
            .collect();
        sources
    }

    /// What files name of each other, leaving out what a file names of a module enclosing its
    /// own (`super::Type` in a child of `web/store/mod.rs`): a module's children and its
    /// `mod.rs` are one room.
    fn between_files(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let module_of = |file: &Path| -> Option<&ModulePath> {
            self.modules
                .iter()
                .filter(|(_, f)| f.as_path() == file)
                .map(|(module, _)| module)
                .min_by_key(|module| module.len())
        };
        self.names
            .iter()
            .map(|(file, named)| {
                let own = module_of(file).cloned().unwrap_or_default();
                let kept = named
                    .iter()
                    .filter(|target| {
                        let enclosing = module_of(target)
                            .is_some_and(|m| own.len() > m.len() && own.starts_with(m));
                        !enclosing
                    })
                    .cloned()
                    .collect();
                (file.clone(), kept)
            })
            .collect()
    }

    /// The top-level module of a file (`web` for `src/web/store/redis.rs`).
    fn top(&self, file: &Path) -> Option<String> {
        self.modules
            .iter()
            .find(|(_, f)| f.as_path() == file)
            .and_then(|(module, _)| module.first().cloned())
    }
}

/// Calls `found(module path, file)` for each module `items` declare in `module`: a file of its
/// own (`mod x;`, `Some(path of the file)`) or inline (`mod x { ... }`, `None`), test modules
/// left out, inline ones followed down.
fn declared_modules(
    items: &[syn::Item],
    module: &ModulePath,
    dir: &Path,
    file: &Path,
    found: &mut dyn FnMut(ModulePath, Option<PathBuf>),
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test(&m.attrs) {
            continue;
        }
        let mut path = module.clone();
        path.push(m.ident.to_string());
        match &m.content {
            None => {
                let name = m.ident.to_string();
                let flat = dir.join(format!("{name}.rs"));
                let nested = dir.join(&name).join("mod.rs");
                let child = if flat.exists() { flat } else { nested };
                assert!(child.exists(), "{}: mod {name} has no file", file.display());
                found(path, Some(child));
            }
            Some((_, inner)) => {
                found(path.clone(), None);
                declared_modules(inner, &path, &dir.join(m.ident.to_string()), file, found);
            }
        }
    }
}

/// The file of the module `path` names when written in `module`: `crate::`, `super::` (any
/// number), `self::`, or a module declared in `module`; `None` for anything else (std, other
/// crates, items in scope).
fn resolve(
    modules: &BTreeMap<ModulePath, PathBuf>,
    module: &ModulePath,
    path: &[String],
) -> Option<PathBuf> {
    let mut at: ModulePath = module.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    // The longest module the path goes through.
    let mut best = modules.get(&at).cloned();
    for segment in rest {
        at.push(segment.clone());
        match modules.get(&at) {
            Some(file) => best = Some(file.clone()),
            None => break,
        }
    }
    // The crate root names nothing of its own but its modules.
    best.filter(|file| !file.ends_with("lib.rs"))
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` is in no layer of tests/it/layering.rs"))
}

/// Every path one top-level module names in another that breaks the layers: upward, or from
/// one face to another.
fn layer_violations(sources: &Sources) -> Vec<String> {
    let mut broken = Vec::new();
    for (file, named) in &sources.names {
        let Some(from) = sources.top(file) else {
            continue;
        };
        for target in named {
            let Some(to) = sources.top(target) else {
                continue;
            };
            if to == from {
                continue;
            }
            let (from_layer, to_layer) = (layer_of(&from), layer_of(&to));
            if to_layer < from_layer {
                broken.push(format!(
                    "{} names {} (upward: {from} is below {to})",
                    file.display(),
                    target.display()
                ));
            } else if to_layer == from_layer && from_layer == FACES {
                broken.push(format!(
                    "{} names {} (a face naming a face)",
                    file.display(),
                    target.display()
                ));
            }
        }
    }
    broken
}

/// A circle of files that name each other, if there is one.
fn circle(names: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        file: &PathBuf,
        names: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        marks: &mut BTreeMap<PathBuf, Mark>,
        trail: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        match marks.get(file) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = trail.iter().position(|f| f == file).unwrap();
                let mut circle = trail[start..].to_vec();
                circle.push(file.clone());
                return Some(circle);
            }
            None => {}
        }
        marks.insert(file.clone(), Mark::Open);
        trail.push(file.clone());
        for next in names.get(file).into_iter().flatten() {
            if let Some(circle) = visit(next, names, marks, trail) {
                return Some(circle);
            }
        }
        trail.pop();
        marks.insert(file.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for file in names.keys() {
        if let Some(circle) = visit(file, names, &mut marks, &mut Vec::new()) {
            return Some(circle);
        }
    }
    None
}

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn shown(files: &[PathBuf]) -> String {
    let root = src();
    files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect::<Vec<_>>()
        .join(" -> ")
}

#[test]
fn modules_name_only_their_own_layer_or_below_and_no_face_another() {
    let broken = layer_violations(&Sources::read(&src()));
    assert!(
        broken.is_empty(),
        "the layers are broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_files_name_each_other_through_any_chain() {
    if let Some(circle) = circle(&Sources::read(&src()).between_files()) {
        panic!("files that name each other: {}", shown(&circle));
    }
}

/// The reading itself: grouped imports, `super::` chains and inline paths count; comments,
/// strings and test code do not.
#[test]
fn every_kind_of_path_is_read_and_nothing_else() {
    let dir = scratch("layering-reading");
    write(
        &dir,
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
    );
    write(&dir, "a.rs", "pub mod inner;\n");
    write(
        &dir,
        "a/inner.rs",
        "use crate::{b::X, c};\npub fn f() { super::super::d::g(); }\n\
         // crate::net is a comment\nconst S: &str = \"crate::net\";\n\
         #[cfg(test)] mod tests { use crate::net; }\n",
    );
    for name in ["b", "c", "d"] {
        write(
            &dir,
            &format!("{name}.rs"),
            "pub fn g() {}\npub struct X;\n",
        );
    }
    let sources = Sources::read(&dir);
    let named: Vec<String> = sources.names[&dir.join("a/inner.rs")]
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(named, ["b.rs", "c.rs", "d.rs"]);
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A copy of the sources with `add` appended to each file `relative` of `edits`.
pub(crate) fn copy_with(name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let dir = scratch(name);
    let mut stack = vec![src()];
    while let Some(from) = stack.pop() {
        for entry in std::fs::read_dir(&from).unwrap() {
            let path = entry.unwrap().path();
            let to = dir.join(path.strip_prefix(src()).unwrap());
            if path.is_dir() {
                std::fs::create_dir_all(&to).unwrap();
                stack.push(path);
            } else {
                std::fs::copy(&path, &to).unwrap();
            }
        }
    }
    for (relative, add) in edits {
        let file = dir.join(relative);
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}\n{add}\n")).unwrap();
    }
    dir
}

/// Each rule fails on a violation put into a copy of the sources: an upward import written
/// inside a group, a face naming a face in an inline path, and a circle through `super::`.
#[test]
fn a_violation_of_each_kind_fails() {
    let upward = copy_with(
        "layering-upward",
        &[("text.rs", "use crate::{clock, report::State};")],
    );
    let broken = layer_violations(&Sources::read(&upward));
    assert!(
        broken
            .iter()
            .any(|b| b.contains("text.rs") && b.contains("upward")),
        "{broken:?}"
    );

    let face = copy_with(
        "layering-face",
        &[(
            "wizard.rs",
            "pub fn reach() -> usize { crate::web::limits::FRUITLESS_SCANS }",
        )],
    );
    let broken = layer_violations(&Sources::read(&face));
    assert!(
        broken
            .iter()
            .any(|b| b.contains("wizard.rs") && b.contains("a face naming a face")),
        "{broken:?}"
    );

    // Two files of one layer, each naming the other (one through `super::`).
    let circle_of = copy_with(
        "layering-circle",
        &[
            ("text.rs", "pub fn g() { crate::severity::Severity::Low; }"),
            ("severity.rs", "pub fn h() { super::text::one_line(\"\"); }"),
        ],
    );
    assert!(layer_violations(&Sources::read(&circle_of)).is_empty());
    let circle = circle(&Sources::read(&circle_of).between_files()).expect("a circle");
    assert!(
        shown(&circle).contains("text.rs") && shown(&circle).contains("severity.rs"),
        "{}",
        shown(&circle)
    );
}

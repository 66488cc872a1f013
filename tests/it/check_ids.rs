//! A check is named through its row, never through its id spelled out. Every production file
//! is parsed (`syn`, test code left out, the arguments of `format!` and its kin included): a
//! string literal equal to a check id, or starting with a family's `root:`, fails when it is
//! written outside the file that declares the check's row. Code elsewhere names the row
//! (`transport::TLS_TRUSTED.id`), so renaming a check is one edit and a typo does not build.

use super::layering::{Sources, copy_with, is_test_impl_item, is_test_item, src};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Literals that spell a check id by coincidence, and what they are instead.
const NOT_CHECK_IDS: &[(&str, &str, &str)] = &[
    (
        "assess/fingerprint.rs",
        "authentication",
        "a fingerprint area, a key of the fingerprint document",
    ),
    (
        "web/discovery.rs",
        "authentication",
        "a member of the discovery document: how a client signs in to the API",
    ),
];

/// Every string literal of production code, with the check rows it declares.
#[derive(Default)]
struct Literals {
    /// Each literal's value.
    found: Vec<String>,
    /// `id` (and `family`) values of `CheckSpec { .. }` expressions.
    declared: Vec<String>,
}

impl<'ast> Visit<'ast> for Literals {
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

    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        self.found.push(lit.value());
    }

    /// A macro's arguments, when they read as expressions (`format!`, `matches!`, ...).
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        use syn::punctuated::Punctuated;
        let parser = Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = mac.parse_body_with(parser) {
            for arg in &args {
                self.visit_expr(arg);
            }
        }
    }

    /// A row declares its `id` and `family`; its `category` is a word, not a check.
    fn visit_expr_struct(&mut self, expr: &'ast syn::ExprStruct) {
        let is_row = expr
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "CheckSpec");
        if !is_row {
            return syn::visit::visit_expr_struct(self, expr);
        }
        for field in &expr.fields {
            let name = match &field.member {
                syn::Member::Named(name) => name.to_string(),
                syn::Member::Unnamed(_) => String::new(),
            };
            match name.as_str() {
                "id" | "family" => {
                    let mut inner = Literals::default();
                    inner.visit_expr(&field.expr);
                    self.declared.extend(inner.found);
                }
                "category" => {}
                _ => self.visit_expr(&field.expr),
            }
        }
        if let Some(rest) = &expr.rest {
            self.visit_expr(rest);
        }
    }
}

fn literals_of(file: &syn::File) -> Literals {
    let mut literals = Literals::default();
    literals.visit_file(file);
    literals
}

/// Every literal naming a check outside the file of its row: "file: \"literal\"".
fn ids_spelled_out(root: &Path) -> Vec<String> {
    let sources = Sources::read(root);
    let read: Vec<(&PathBuf, Literals)> = sources
        .files
        .iter()
        .map(|(file, syntax)| (file, literals_of(syntax)))
        .collect();
    let home: BTreeMap<&str, &PathBuf> = read
        .iter()
        .flat_map(|(file, lits)| lits.declared.iter().map(move |id| (id.as_str(), *file)))
        .filter(|(id, _)| !id.is_empty())
        .collect();
    assert!(home.len() > 30, "the check rows were not found: {home:?}");
    let mut spelled = Vec::new();
    for (file, lits) in &read {
        for value in &lits.found {
            let root_of = value
                .split_once(':')
                .map_or(value.as_str(), |(root, _)| root);
            let named = home
                .get(value.as_str())
                .or_else(|| home.get(root_of).filter(|_| value.contains(':')));
            let shown = file
                .strip_prefix(root)
                .unwrap_or(file)
                .display()
                .to_string();
            let coincidence = NOT_CHECK_IDS
                .iter()
                .any(|(at, literal, _)| *at == shown && literal == value);
            if let Some(home) = named
                && home != file
                && !coincidence
            {
                spelled.push(format!("{shown}: {value:?}"));
            }
        }
    }
    spelled
}

#[test]
fn no_check_id_is_spelled_out_outside_its_module() {
    let spelled = ids_spelled_out(&src());
    assert!(
        spelled.is_empty(),
        "check ids written as strings outside their module (name the row instead, \
         e.g. transport::TLS_TRUSTED.id):\n{}",
        spelled.join("\n")
    );
}

/// An id spelled out in another module, in code and in a `format!`, fails; in a comment or
/// a test it does not.
#[test]
fn a_spelled_out_id_fails() {
    let copy = copy_with(
        "check-ids-spelled",
        &[(
            "text.rs",
            "pub fn a() -> &'static str { \"tlsTrusted\" }\n\
             pub fn b(p: &str) -> String { format!(\"{}{p}\", \"exposed:\") }\n\
             // \"cookieSecure\" in a comment\n\
             #[cfg(test)] mod t { const X: &str = \"dnssec\"; }",
        )],
    );
    let spelled = ids_spelled_out(&copy);
    let in_text: Vec<&String> = spelled
        .iter()
        .filter(|s| s.starts_with("text.rs"))
        .collect();
    assert_eq!(
        in_text,
        [r#"text.rs: "tlsTrusted""#, r#"text.rs: "exposed:""#],
        "{spelled:?}"
    );
}

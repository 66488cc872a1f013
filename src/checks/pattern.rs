//! Patterns over check ids, as waivers, policies and `--all-addresses` parity name them: an id,
//! a family root (`debugPort` covers `debugPort:9205`), or a glob with `*`.

/// Whether `pattern` covers the finding `id`.
pub fn matches(pattern: &str, id: &str) -> bool {
    if pattern == id {
        return true;
    }
    if !pattern.contains('*') {
        // A family root covers `root:anything`.
        return id
            .strip_prefix(pattern)
            .is_some_and(|rest| rest.starts_with(':'));
    }
    glob(pattern, id)
}

/// `*` matches any run of characters. Linear in the pattern and the text: the text must start
/// with the part before the first star and end with the part after the last, and the parts
/// between must appear in order, each as early as it can (taking the earliest occurrence
/// never rules out a match a later one would allow). Patterns and ids read from result
/// documents (`waiver_review`) are not the operator's own, so no input may make it quadratic.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let mut middle: Vec<&str> = parts.collect();
    let last = middle.pop().unwrap_or("");
    if rest.len() < last.len() || !rest.ends_with(last) {
        return false;
    }
    rest = &rest[..rest.len() - last.len()];
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

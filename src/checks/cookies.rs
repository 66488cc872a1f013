//! Cookie attributes of every `Set-Cookie` the scan received (the root page, the probes, the
//! demo sign-ins): `cookieSecure`, `cookieHttpOnly`, `cookieSameSite` and `cookiePrefix`.
//! OpenCloud's own sign-in cookie (`__Secure-KKT`) carries all of them; an offending cookie
//! usually comes from something in front of it (sticky-session cookies of load balancers).
//! Cookies that are being deleted carry nothing to protect and are left out, except for the
//! prefix rules, which browsers enforce on deletions too. No cookie seen, no finding.

use super::{CheckSpec, CookieAttribute, Fix, Measure, REVERSE_PROXY, Unmeasured, finding};
use crate::net::http::Scheme;
use crate::probe::Measurements;
use crate::probe::status::printable;
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;
use std::collections::BTreeSet;

const DOCS: &str = "https://developer.mozilla.org/docs/Web/HTTP/Headers/Set-Cookie";

/// What every row of this module shares: read from every answer's `Set-Cookie`, fixed where
/// the cookie is set (usually the reverse proxy).
const COOKIE_ROW: CheckSpec = CheckSpec {
    role: Role::Check,
    category: Category::Cookies,
    documentation: DOCS,
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::EveryAnswer],
    when_absent: no_cookie_seen,
    ..CheckSpec::ROW
};

/// No finding after answers came: no answer set a cookie.
fn no_cookie_seen(_: Option<&str>, m: &Measurements) -> Option<String> {
    let answered = m.every_answer().next().is_some();
    answered.then(|| "no answer sets a cookie".into())
}

pub static COOKIE_SECURE: CheckSpec = CheckSpec {
    id: "cookieSecure",
    severity: Severity::High,
    title: "Cookies are sent over HTTPS only",
    remediation: "Set the Secure attribute on every cookie (in the reverse proxy, e.g. nginx \
                  proxy_cookie_flags ~ secure, or in the application that sets it) so the \
                  browser never sends it over plain HTTP.",
    fix: Fix::Cookie(CookieAttribute::Secure),
    // Over plain HTTP the transport is the finding (`httpsAvailable`), not the attribute.
    when_absent: |_, m| match m.endpoint.scheme {
        Scheme::Https => no_cookie_seen(None, m),
        Scheme::Http => None,
    },
    unmeasured: &[Unmeasured::OverPlainHttp],
    ..COOKIE_ROW
};

pub static COOKIE_HTTP_ONLY: CheckSpec = CheckSpec {
    id: "cookieHttpOnly",
    severity: Severity::Medium,
    title: "Cookies are hidden from scripts",
    remediation: "Set the HttpOnly attribute on every cookie scripts do not need to read, so \
                  an injected script cannot steal it.",
    fix: Fix::Cookie(CookieAttribute::HttpOnly),
    ..COOKIE_ROW
};

pub static COOKIE_SAME_SITE: CheckSpec = CheckSpec {
    id: "cookieSameSite",
    severity: Severity::Low,
    title: "Cookies declare SameSite",
    remediation: "Set SameSite=Lax or SameSite=Strict on every cookie (SameSite=None only \
                  together with Secure), so other sites cannot ride on it.",
    fix: Fix::Cookie(CookieAttribute::SameSite),
    ..COOKIE_ROW
};

pub static COOKIE_PREFIX: CheckSpec = CheckSpec {
    id: "cookiePrefix",
    role: Role::Hardening,
    severity: Severity::Low,
    title: "Prefixed cookies meet their prefix rules",
    remediation: "A __Secure- cookie needs Secure; a __Host- cookie needs Secure, Path=/ \
                  and no Domain. Fix the attributes or drop the prefix; browsers refuse a \
                  cookie that breaks its prefix.",
    ..COOKIE_ROW
};

pub static ROWS: &[&CheckSpec] = &[
    &COOKIE_SECURE,
    &COOKIE_HTTP_ONLY,
    &COOKIE_SAME_SITE,
    &COOKIE_PREFIX,
];

/// A `Set-Cookie` header: name, value and attributes (names lower-cased, values as sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetCookie {
    pub name: String,
    pub value: String,
    /// Attributes in order; a bare flag (`Secure`) has an empty value.
    pub attributes: Vec<(String, String)>,
}

/// A calendar instant as `(year, month, day, hour, minute, second)`, UTC; ordered.
pub type CookieDate = (i32, u8, u8, u8, u8, u8);

impl SetCookie {
    /// Parses one header value (RFC 6265 §5.2): `None` when it holds neither name nor value.
    pub fn parse(header: &str) -> Option<SetCookie> {
        let mut parts = header.split(';');
        let pair = parts.next().unwrap_or_default();
        let (name, value) = match pair.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            // A bare token is a nameless cookie's value.
            None => ("", pair.trim()),
        };
        if name.is_empty() && value.is_empty() {
            return None;
        }
        let attributes = parts
            .filter_map(|part| {
                let (n, v) = part.split_once('=').unwrap_or((part, ""));
                let n = n.trim().to_ascii_lowercase();
                (!n.is_empty()).then(|| (n, v.trim().to_string()))
            })
            .collect();
        Some(SetCookie {
            name: name.to_string(),
            value: value.to_string(),
            attributes,
        })
    }

    /// The last value of an attribute (later ones win, as in browsers), by lower-case name.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn secure(&self) -> bool {
        self.attribute("secure").is_some()
    }

    pub fn http_only(&self) -> bool {
        self.attribute("httponly").is_some()
    }

    /// `Strict`, `Lax`, `None` or whatever else was sent.
    pub fn same_site(&self) -> Option<&str> {
        self.attribute("samesite")
    }

    pub fn path(&self) -> Option<&str> {
        self.attribute("path")
    }

    pub fn domain(&self) -> Option<&str> {
        self.attribute("domain").filter(|d| !d.is_empty())
    }

    /// `Max-Age` in seconds; out-of-range numbers saturate.
    pub fn max_age(&self) -> Option<i64> {
        let text = self.attribute("max-age")?;
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(match digits.parse::<i64>() {
            Ok(n) if negative => -n,
            Ok(n) => n,
            Err(_) if negative => i64::MIN,
            Err(_) => i64::MAX,
        })
    }

    pub fn expires(&self) -> Option<CookieDate> {
        self.attribute("expires").and_then(parse_cookie_date)
    }

    /// The cookie is being removed: empty value, `Max-Age` of zero or less, or (without
    /// `Max-Age`, which takes precedence) an `Expires` at or before `reference` (the answer's
    /// `Date`). Without a reference, an `Expires` before 2000 counts: deletions use the epoch.
    pub fn is_deletion(&self, reference: Option<CookieDate>) -> bool {
        if self.value.is_empty() || self.value == "\"\"" {
            return true;
        }
        if let Some(age) = self.max_age() {
            return age <= 0;
        }
        match (self.expires(), reference) {
            (Some(expires), Some(now)) => expires <= now,
            (Some(expires), None) => expires.0 < 2000,
            (None, _) => false,
        }
    }

    /// Which prefix rule the cookie breaks, if it claims `__Secure-` or `__Host-`.
    pub fn prefix_violation(&self) -> Option<&'static str> {
        match self.prefix()? {
            SECURE if !self.secure() => Some("a __Secure- cookie without Secure"),
            HOST if !self.secure() => Some("a __Host- cookie without Secure"),
            HOST if self.path() != Some("/") => Some("a __Host- cookie without Path=/"),
            HOST if self.domain().is_some() => Some("a __Host- cookie with a Domain"),
            _ => None,
        }
    }

    /// The prefix the name claims, [`SECURE`] or [`HOST`] (browsers compare it
    /// case-insensitively).
    fn prefix(&self) -> Option<&'static str> {
        [SECURE, HOST].into_iter().find(|prefix| {
            self.name
                .get(..prefix.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
        })
    }
}

/// The cookie name prefixes that bind a cookie to rules.
const SECURE: &str = "__Secure-";
const HOST: &str = "__Host-";

/// Reads a cookie date the lenient way browsers do (RFC 6265 §5.1.1): IMF-fixdate
/// (`Thu, 01 Jan 1970 00:00:00 GMT`), RFC 850, asctime and the usual dashed variants.
pub fn parse_cookie_date(text: &str) -> Option<CookieDate> {
    let is_delimiter = |c: char| matches!(c, '\t' | '\x20'..='\x2f' | '\x3b'..='\x40' | '\x5b'..='\x60' | '\x7b'..='\x7e');
    let mut time: Option<(u8, u8, u8)> = None;
    let mut day: Option<u8> = None;
    let mut month: Option<u8> = None;
    let mut year: Option<i32> = None;
    for token in text.split(is_delimiter).filter(|t| !t.is_empty()).take(64) {
        if time.is_none()
            && let Some(t) = parse_time(token)
        {
            time = Some(t);
        } else if day.is_none()
            && let Some(d) = leading_digits(token, 1, 2)
        {
            day = Some(d as u8);
        } else if month.is_none()
            && let Some(m) = parse_month(token)
        {
            month = Some(m);
        } else if year.is_none()
            && let Some(y) = leading_digits(token, 2, 4)
        {
            year = Some(y as i32);
        }
    }
    let (hour, minute, second) = time?;
    let (day, month, mut year) = (day?, month?, year?);
    if (70..=99).contains(&year) {
        year += 1900;
    } else if (0..=69).contains(&year) {
        year += 2000;
    }
    let valid =
        (1..=31).contains(&day) && year >= 1601 && hour <= 23 && minute <= 59 && second <= 59;
    valid.then_some((year, month, day, hour, minute, second))
}

/// `min..=max` digits at the start of the token, followed by a non-digit or nothing.
fn leading_digits(token: &str, min: usize, max: usize) -> Option<u32> {
    let digits = token.bytes().take_while(u8::is_ascii_digit).count();
    if digits < min || digits > max {
        return None;
    }
    token[..digits].parse().ok()
}

fn parse_time(token: &str) -> Option<(u8, u8, u8)> {
    let mut fields = token.splitn(3, ':');
    let hour = leading_digits(fields.next()?, 1, 2)?;
    let minute = fields.next()?;
    if minute.len() > 2 {
        return None;
    }
    let minute = leading_digits(minute, 1, 2)?;
    let second = leading_digits(fields.next()?, 1, 2)?;
    Some((hour as u8, minute as u8, second as u8))
}

fn parse_month(token: &str) -> Option<u8> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let prefix = token.get(..3)?.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == prefix)
        .map(|i| i as u8 + 1)
}

/// One cookie as received, with whether it is a deletion.
struct Seen {
    cookie: SetCookie,
    deletion: bool,
}

/// Every `Set-Cookie` in the answers the scan received.
fn observed(m: &Measurements) -> Vec<Seen> {
    let mut seen = Vec::new();
    for response in m.every_answer() {
        // A deletion is judged by the answer's own clock.
        let reference = response.header("date").and_then(parse_cookie_date);
        for cookie in response
            .header_values("set-cookie")
            .into_iter()
            .filter_map(SetCookie::parse)
        {
            let deletion = cookie.is_deletion(reference);
            seen.push(Seen { cookie, deletion });
        }
    }
    seen
}

/// A bounded, printable list of cookie names for a detail sentence.
fn names(set: &BTreeSet<String>) -> String {
    const SHOWN: usize = 5;
    let mut listed: Vec<String> = set.iter().take(SHOWN).cloned().collect();
    if set.len() > SHOWN {
        listed.push(format!("and {} more", set.len() - SHOWN));
    }
    listed.join(", ")
}

fn display_name(cookie: &SetCookie) -> String {
    if cookie.name.is_empty() {
        return "(unnamed)".into();
    }
    let shown: String = printable(&cookie.name).chars().take(40).collect();
    if shown.is_empty() {
        "(unprintable)".into()
    } else {
        shown
    }
}

/// Passed when no live cookie breaks the rule, failed naming those that do.
fn judge<'a>(
    id: &'static CheckSpec,
    cookies: impl Iterator<Item = &'a SetCookie>,
    breaks: impl Fn(&SetCookie) -> bool,
    failed: &str,
    passed: &str,
) -> Finding {
    let mut all = BTreeSet::new();
    let mut offenders = BTreeSet::new();
    for cookie in cookies {
        all.insert(display_name(cookie));
        if breaks(cookie) {
            offenders.insert(display_name(cookie));
        }
    }
    if offenders.is_empty() {
        let detail = format!("{passed} ({} cookie(s): {})", all.len(), names(&all));
        finding(id, Status::Passed, detail)
    } else {
        finding(
            id,
            Status::Failed,
            format!("{failed}: {}", names(&offenders)),
        )
    }
}

fn same_site_problem(cookie: &SetCookie) -> bool {
    match cookie.same_site().map(str::to_ascii_lowercase).as_deref() {
        Some("strict" | "lax") => false,
        Some("none") => !cookie.secure(),
        _ => true,
    }
}

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let seen = observed(m);
    if seen.is_empty() {
        return Vec::new();
    }
    let mut findings = Vec::new();
    let live: Vec<&SetCookie> = seen
        .iter()
        .filter(|s| !s.deletion)
        .map(|s| &s.cookie)
        .collect();
    if !live.is_empty() {
        // Over plain HTTP the transport is the finding (`httpsAvailable`), not the attribute.
        if m.endpoint.scheme == Scheme::Https {
            findings.push(judge(
                &COOKIE_SECURE,
                live.iter().copied(),
                |c| !c.secure(),
                "cookie(s) without Secure",
                "every cookie is Secure",
            ));
        }
        findings.push(judge(
            &COOKIE_HTTP_ONLY,
            live.iter().copied(),
            |c| !c.http_only(),
            "cookie(s) without HttpOnly",
            "every cookie is HttpOnly",
        ));
        findings.push(judge(
            &COOKIE_SAME_SITE,
            live.iter().copied(),
            same_site_problem,
            "cookie(s) without SameSite=Strict/Lax (or SameSite=None without Secure)",
            "every cookie declares SameSite",
        ));
    }
    let prefixed: Vec<&SetCookie> = seen
        .iter()
        .map(|s| &s.cookie)
        .filter(|c| c.prefix().is_some())
        .collect();
    let violations: BTreeSet<String> = prefixed
        .iter()
        .filter_map(|c| {
            c.prefix_violation()
                .map(|why| format!("{} ({why})", display_name(c)))
        })
        .collect();
    let (status, detail) = if !violations.is_empty() {
        let broken = names(&violations);
        (Status::Failed, format!("prefix rules broken: {broken}"))
    } else if prefixed.is_empty() {
        let detail = "no cookie claims a __Secure- or __Host- prefix";
        (Status::Passed, detail.into())
    } else {
        let all: BTreeSet<String> = prefixed.iter().map(|c| display_name(c)).collect();
        let met = names(&all);
        (
            Status::Passed,
            format!("prefixed cookies meet their rules: {met}"),
        )
    };
    findings.push(finding(&COOKIE_PREFIX, status, detail));
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HttpsObservation;
    use crate::net::http::{Endpoint, Response};
    use crate::net::tls::{Handshake, TrustedBy};

    /// The real answer of OpenCloud 4.0.0 to a demo sign-in (headers only).
    const REAL_KKT: &str = "__Secure-KKT=eyJhbGciOiJBMjU2R0NNS1ciLCJlbmMiOiJBMjU2R0NNIn0.x.y; \
                            Path=/signin/v1/identifier/_/; HttpOnly; Secure; SameSite=Strict";
    const REAL_KKBS: &str = "__Secure-KKBS=; Path=/konnect/v1/session/; Expires=Thu, 01 Jan \
                             1970 00:00:00 GMT; Secure; SameSite=Strict";

    fn measurements(https: bool, set_cookies: &[&str]) -> Measurements {
        let endpoint = Endpoint {
            scheme: if https { Scheme::Https } else { Scheme::Http },
            url_host: "cloud.example.org".into(),
            port: 443,
            base_path: String::new(),
        };
        let observation = if https {
            HttpsObservation::Verified(Handshake {
                protocol: "TLSv1.3".into(),
                cipher_suite: String::new(),
                chain: Vec::new(),
                trust: Ok(TrustedBy::PublicRoots),
            })
        } else {
            HttpsObservation::Unavailable("refused".into())
        };
        let mut m = Measurements::empty(endpoint, observation);
        let mut headers = vec![("Date".to_string(), "Sun, 22 Nov 2026 03:06:50 GMT".into())];
        headers.extend(
            set_cookies
                .iter()
                .map(|c| ("Set-Cookie".to_string(), c.to_string())),
        );
        m.http.insert(
            "demo:dennis".into(),
            Ok(Response {
                status: 200,
                headers,
                body: Vec::new(),
                truncated: false,
                digest: None,
            }),
        );
        m.root = Some(Response {
            status: 200,
            ..Response::default()
        });
        m
    }

    fn status_of(findings: &[Finding], id: &str) -> Option<Status> {
        findings.iter().find(|f| f.id == id).map(|f| f.status)
    }

    #[test]
    fn parses_the_real_sign_in_cookie() {
        let c = SetCookie::parse(REAL_KKT).unwrap();
        assert_eq!(c.name, "__Secure-KKT");
        assert!(c.secure() && c.http_only());
        assert_eq!(c.same_site(), Some("Strict"));
        assert_eq!(c.path(), Some("/signin/v1/identifier/_/"));
        assert!(!c.is_deletion(Some((2026, 11, 22, 3, 6, 50))));
        assert_eq!(c.prefix_violation(), None);

        let d = SetCookie::parse(REAL_KKBS).unwrap();
        assert_eq!(d.expires(), Some((1970, 1, 1, 0, 0, 0)));
        assert!(d.is_deletion(None));
    }

    #[test]
    fn parser_edge_cases() {
        assert_eq!(SetCookie::parse(""), None);
        assert_eq!(SetCookie::parse(" ; Secure"), None);
        let c = SetCookie::parse("token").unwrap();
        assert_eq!((c.name.as_str(), c.value.as_str()), ("", "token"));
        let c = SetCookie::parse("a=b=c; SECURE; httponly ; samesite = lax ; Max-Age=abc").unwrap();
        assert_eq!(c.value, "b=c");
        assert!(c.secure() && c.http_only());
        assert_eq!(c.same_site(), Some("lax"));
        assert_eq!(c.max_age(), None);
        let c = SetCookie::parse("a=1; Max-Age=99999999999999999999999").unwrap();
        assert_eq!(c.max_age(), Some(i64::MAX));
        assert!(!c.is_deletion(None));
        let c = SetCookie::parse("a=1; Max-Age=-5; Expires=Fri, 01 Jan 2100 00:00:00 GMT").unwrap();
        assert!(c.is_deletion(None), "Max-Age wins over Expires");
        let c = SetCookie::parse("a=1; Max-Age=0").unwrap();
        assert!(c.is_deletion(None));
        let c = SetCookie::parse("a=1; Expires=Sat, 21-Nov-2026 03:00:00 GMT").unwrap();
        assert!(c.is_deletion(Some((2026, 11, 22, 0, 0, 0))));
        assert!(!c.is_deletion(Some((2026, 11, 20, 0, 0, 0))));
        assert!(!c.is_deletion(None));
    }

    #[test]
    fn cookie_dates() {
        for (text, want) in [
            ("Thu, 01 Jan 1970 00:00:00 GMT", Some((1970, 1, 1, 0, 0, 0))),
            (
                "Thursday, 01-Jan-70 00:00:01 GMT",
                Some((1970, 1, 1, 0, 0, 1)),
            ),
            ("Sun Nov  6 08:49:37 1994", Some((1994, 11, 6, 8, 49, 37))),
            (
                "Wed, 09 Jun 2021 10:18:14 GMT",
                Some((2021, 6, 9, 10, 18, 14)),
            ),
            ("09 Jun 21 10:18:14", Some((2021, 6, 9, 10, 18, 14))),
            ("Wed, 32 Jun 2021 10:18:14 GMT", None),
            ("Wed, 09 Jun 2021 25:18:14 GMT", None),
            ("Wed, 09 Foo 2021 10:18:14 GMT", None),
            ("", None),
        ] {
            assert_eq!(parse_cookie_date(text), want, "{text}");
        }
    }

    #[test]
    fn the_real_instance_passes() {
        let m = measurements(true, &[REAL_KKT, REAL_KKBS, REAL_KKBS]);
        let findings = evaluate(&m);
        for id in [
            "cookieSecure",
            "cookieHttpOnly",
            "cookieSameSite",
            "cookiePrefix",
        ] {
            assert_eq!(
                status_of(&findings, id),
                Some(Status::Passed),
                "{id}: {findings:?}"
            );
        }
        let secure = findings.iter().find(|f| f.id == "cookieSecure").unwrap();
        assert_eq!(secure.role, Role::Check);
        assert_eq!(secure.severity, Severity::High);
        assert!(secure.detail.contains("__Secure-KKT"), "{}", secure.detail);
    }

    #[test]
    fn a_bare_cookie_fails_every_attribute_check() {
        let m = measurements(true, &["session=abc; Path=/"]);
        let findings = evaluate(&m);
        for id in ["cookieSecure", "cookieHttpOnly", "cookieSameSite"] {
            let f = findings.iter().find(|f| f.id == id).unwrap();
            assert_eq!(f.status, Status::Failed, "{id}");
            assert!(f.detail.ends_with(": session"), "{}", f.detail);
        }
        assert_eq!(status_of(&findings, "cookiePrefix"), Some(Status::Passed));
        let sev = |id: &str| findings.iter().find(|f| f.id == id).unwrap().severity;
        assert_eq!(sev("cookieHttpOnly"), Severity::Medium);
        assert_eq!(sev("cookieSameSite"), Severity::Low);
    }

    #[test]
    fn same_site_none_needs_secure() {
        let f = evaluate(&measurements(true, &["a=1; HttpOnly; SameSite=None"]));
        assert_eq!(status_of(&f, "cookieSameSite"), Some(Status::Failed));
        let f = evaluate(&measurements(
            true,
            &["a=1; HttpOnly; Secure; SameSite=None"],
        ));
        assert_eq!(status_of(&f, "cookieSameSite"), Some(Status::Passed));
        let f = evaluate(&measurements(
            true,
            &["a=1; HttpOnly; Secure; SameSite=Bogus"],
        ));
        assert_eq!(status_of(&f, "cookieSameSite"), Some(Status::Failed));
    }

    #[test]
    fn deletions_are_not_judged_but_prefixes_are() {
        let f = evaluate(&measurements(
            true,
            &[
                "old=; Path=/",
                "gone=x; Max-Age=0",
                "__Host-x=; Path=/app; Secure",
            ],
        ));
        assert_eq!(status_of(&f, "cookieSecure"), None);
        assert_eq!(status_of(&f, "cookieHttpOnly"), None);
        let prefix = f.iter().find(|f| f.id == "cookiePrefix").unwrap();
        assert_eq!(prefix.status, Status::Failed);
        assert_eq!(prefix.role, Role::Hardening);
        assert!(
            prefix
                .detail
                .contains("__Host-x (a __Host- cookie without Path=/)")
        );
    }

    #[test]
    fn prefix_rules() {
        let violation = |h: &str| SetCookie::parse(h).unwrap().prefix_violation();
        assert!(violation("__Secure-a=1").is_some());
        assert!(violation("__secure-a=1; Path=/").is_some());
        assert!(violation("__Secure-a=1; Secure").is_none());
        assert!(violation("__Host-a=1; Secure; Path=/").is_none());
        assert!(violation("__Host-a=1; Secure; Path=/; Domain=example.org").is_some());
        assert!(violation("__Host-a=1; Path=/").is_some());
        assert!(violation("plain=1").is_none());
    }

    #[test]
    fn no_cookie_no_finding_and_no_secure_check_over_http() {
        assert!(evaluate(&measurements(true, &[])).is_empty());
        let f = evaluate(&measurements(false, &["session=abc"]));
        assert_eq!(status_of(&f, "cookieSecure"), None);
        assert_eq!(status_of(&f, "cookieHttpOnly"), Some(Status::Failed));
    }

    #[test]
    fn details_stay_bounded_and_printable() {
        let many: Vec<String> = (0..50)
            .map(|i| format!("c{i}\u{1b}[31m{}=v", "x".repeat(300)))
            .collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let f = evaluate(&measurements(true, &refs));
        for finding in &f {
            assert!(finding.detail.len() < 400, "{}", finding.detail);
            assert!(!finding.detail.chars().any(char::is_control));
        }
        let secure = f.iter().find(|f| f.id == "cookieSecure").unwrap();
        assert!(secure.detail.ends_with("and 45 more"), "{}", secure.detail);
    }
}

//! The web pages of the public API, rendered on the server: a landing page with the submission
//! form (`/`), the form's target (`POST /scans`, answered 303 to the result page), and the
//! result page (`/scans/<uuid>`) that follows the scan until it completes and then shows the
//! grade, the state, the findings with their remediation, the plan's fix snippets (a tab per
//! form) and the export links, every text as a visitor reads it (`super::visitor`).
//!
//! No framework and no external assets: one style sheet and two small scripts served from
//! `/static/` (`app.js`; `webmcp.js`, WebMCP tools for an agent in the browser when it offers
//! `navigator.modelContext`), and a Content-Security-Policy without `unsafe-inline`. Everything
//! works without JavaScript (the form posts, a pending page refreshes itself with
//! `<meta http-equiv=refresh>` and offers a link); with it, the pending page polls the JSON API
//! and reloads once the scan completed. Every value from a submission or a scanned server is
//! escaped.

use super::api::{Api, EXPORT_FORMATS, RELEASE_TRACKS};
use super::store::Status;
use super::worker::Completed;
use crate::checks::headers;
use crate::report::{Finding, Form, ScanResult, Snippet, Status as FindingStatus};
use crate::server::http::{Request, Response, parse_form};

/// Every page's policy: our own style sheet, script and form target only.
pub const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; \
                       connect-src 'self'; img-src 'self'; form-action 'self'; \
                       base-uri 'none'; frame-ancestors 'none'";

pub(super) const STYLE: &str = include_str!("static/style.css");
pub(super) const SCRIPT: &str = include_str!("static/app.js");
/// WebMCP tools for an agent in the browser (draft API, feature-detected).
pub(super) const WEBMCP: &str = include_str!("static/webmcp.js");

/// Seconds between refreshes of a pending result page without JavaScript.
const REFRESH_SECS: u32 = 3;

/// Text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A file of `/static/`, cached for an hour.
pub(super) fn static_file(media: &str, body: &'static str) -> Response {
    Response::new(200, media, body).with_header("Cache-Control", "public, max-age=3600")
}

/// A whole page. `root` is the base URL's path (`/scanner` behind a proxy that strips it, or
/// empty), before every link; `webmcp` loads the browser tools (off with `--no-mcp`). The
/// scripts read the root from `<html data-root>`.
fn page(status: u16, title: &str, body: &str, head: &str, root: &str, webmcp: bool) -> Response {
    let root = escape(root);
    let webmcp = if webmcp {
        format!("<script src=\"{root}/static/webmcp.js\" defer></script>\n")
    } else {
        String::new()
    };
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\" data-root=\"{root}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<link rel=\"stylesheet\" href=\"{root}/static/style.css\">\n{head}\
         <script src=\"{root}/static/app.js\" defer></script>\n{webmcp}</head>\n<body>\n\
         <header><a class=\"brand\" href=\"{root}/\">Storage security check</a></header>\n\
         <main>\n{body}\n</main>\n\
         <footer>An outside-in check of OpenCloud and ownCloud Infinite Scale instances. \
         <a href=\"{root}/openapi.json\">API</a></footer>\n</body>\n</html>\n",
        escape(title)
    );
    Response::new(status, "text/html; charset=utf-8", html)
        // What the checks ask of a storage server's pages, this page does too.
        .with_header(headers::CONTENT_SECURITY_POLICY.id, CSP)
        .with_header(headers::X_FRAME_OPTIONS.id, "DENY")
        .with_header(headers::REFERRER_POLICY.id, "no-referrer")
}

fn form(root: &str, message: Option<&str>, target: &str) -> String {
    let error = message
        .map(|m| format!("<p class=\"error\" role=\"alert\">{}</p>\n", escape(m)))
        .unwrap_or_default();
    let tracks: String = RELEASE_TRACKS
        .iter()
        .map(|t| format!("<option value=\"{t}\">{t}</option>"))
        .collect();
    format!(
        "<h1>Check a file-sync server</h1>\n\
         <p>Enter the address of an OpenCloud or ownCloud Infinite Scale instance. The check \
         looks at it from the outside, as any visitor could: version and known advisories, end \
         of life, TLS, security headers, exposed files, demo accounts. It grades the instance \
         from A+ to F.</p>\n{error}\
         <form method=\"post\" action=\"{root}/scans\" class=\"submit\">\n\
         <label for=\"target_url\">Instance</label>\n\
         <input id=\"target_url\" name=\"target_url\" type=\"text\" required \
         placeholder=\"cloud.example.com\" value=\"{}\" autocomplete=\"url\">\n\
         <details><summary>Options</summary>\n\
         <label for=\"release_track\">Release track</label>\n\
         <select id=\"release_track\" name=\"release_track\">{tracks}</select>\n\
         <label for=\"waive\">Accepted findings (comma-separated check ids)</label>\n\
         <input id=\"waive\" name=\"waive\" type=\"text\" placeholder=\"hstsPreload\">\n\
         </details>\n<button type=\"submit\">Check</button>\n</form>\n",
        escape(target),
        root = escape(root),
    )
}

impl Api {
    /// A page of this server, its links under the base URL's path.
    fn html(&self, status: u16, title: &str, body: &str, head: &str) -> Response {
        let root = self.config.path_prefix();
        page(status, title, body, head, root, self.config.mcp)
    }

    /// The landing page's form, again with why the submission was not taken (`message`).
    fn form_page(&self, status: u16, message: Option<&str>, target: &str) -> Response {
        let form = form(self.config.path_prefix(), message, target);
        self.html(status, "Storage security check", &form, "")
    }

    /// The landing page: the submission form.
    pub(super) fn landing_page(&self, _: &Request, _: &[&str]) -> Response {
        self.form_page(200, None, "")
    }

    /// A page that says why there is no result to show, and links to the form.
    fn notice(&self, status: u16, title: &str, text: &str) -> Response {
        let body = format!(
            "<h1>{title}</h1>\n<p>{}</p>\n<p><a href=\"{}/\">Check an instance</a></p>",
            escape(text),
            escape(self.config.path_prefix())
        );
        self.html(status, title, &body, "")
    }

    /// `POST /scans`: the form's submission.
    pub(super) fn form_submission(&self, request: &Request, _: &[&str]) -> Response {
        // Another site's page could make its visitors submit scans through their browsers.
        if request.browser().another_site(&self.config.base_url) {
            let message = "This form only takes submissions from this site's own page.";
            return self.form_page(403, Some(message), "");
        }
        let fields = parse_form(&request.body);
        let field = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default()
        };
        let target_url = field("target_url");
        let refuse =
            |status: u16, message: &str| self.form_page(status, Some(message), &target_url);
        if target_url.is_empty() {
            return refuse(400, "Enter the address of the instance to check.");
        }
        // The form's fields, checked by the JSON API's own reader.
        let waive: Vec<String> = field("waive")
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
        let track = field("release_track");
        let body = serde_json::json!({
            "target_url": target_url,
            "waive": waive,
            "release_track": if track.is_empty() { crate::family::AUTO_TRACK.to_string() } else { track },
        });
        let (scan, target) = match super::api::parse_submission(body.to_string().as_bytes()) {
            Ok(parsed) => parsed,
            Err(e) => return refuse(e.status, &e.message),
        };
        match self.enqueue(scan, &target, request) {
            // The erase key is for a client that reads the JSON answer; a page shows it to
            // nobody (a page is cached, shared and screenshotted), so a form's scan is never
            // erased on request: it expires.
            Ok(super::api::Queued { uuid, .. }) => {
                let location = format!("{}/scans/{uuid}", self.config.path_prefix());
                Response::new(303, "text/plain; charset=utf-8", "See the result page\n")
                    .with_header("Location", &location)
            }
            Err(refused) => refused.retry(refuse(refused.error.status, &refused.error.message)),
        }
    }

    /// `/scans/{uuid}`.
    pub(super) fn result_page(&self, _: &Request, path: &[&str]) -> Response {
        let record = match self.record(path[0]) {
            Ok(record) => record,
            Err(refused) => {
                let text = match refused.error.status {
                    404 => "No such scan: it is unknown, or it has expired.",
                    _ => "The service cannot answer right now; try again shortly.",
                };
                return self.notice(refused.error.status, "Scan not found", text);
            }
        };
        let target = escape(&record.request.target_url);
        let root = escape(self.config.path_prefix());
        if record.status != Status::Completed {
            let state = record.status.as_str();
            let body = format!(
                "<h1>Checking {target}</h1>\n\
                 <p class=\"pending\" data-scan=\"{uuid}\" data-status=\"{state}\">The scan is \
                 <strong>{state}</strong>. This page refreshes itself every {REFRESH_SECS} seconds.</p>\n\
                 <p><a href=\"{root}/scans/{uuid}\">Refresh now</a></p>",
                uuid = escape(&record.uuid)
            );
            let title = format!("Checking {}", record.request.target_url);
            let refresh = format!("<meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\">\n");
            return self.html(200, &title, &body, &refresh);
        }
        let Some(completed) = Completed::parse(record.result.as_deref()) else {
            let text = "The result of this scan cannot be read; check the instance again.";
            return self.notice(503, "Scan not readable", text);
        };
        let title = format!("{} — storage security", record.request.target_url);
        let (prefix, preferred) = (self.config.path_prefix(), record.request.format.as_deref());
        let body = render_result(prefix, &record.uuid, &completed.document, preferred);
        self.html(200, &title, &body, "")
    }
}

/// The completed result: grade, state, product, findings that failed (worst first) with
/// their remediation, the remediation plan, the exports; every text as a visitor reads it.
pub fn render_result(
    root: &str,
    uuid: &str,
    document: &ScanResult,
    preferred: Option<&str>,
) -> String {
    let document = &super::visitor::document(document);
    let root = escape(root);
    let grade = document.grade.as_str();
    let state = document.state.label();
    let state_class = state.to_ascii_lowercase();
    let grade_class = match grade {
        "A+" | "A" => "good",
        "B" | "C" => "fair",
        "U" | "" => "unknown",
        _ => "poor",
    };
    let product = match &document.product {
        Some(p) => format!("{} {}", escape(&p.name), escape(&p.version)),
        None => "No supported product identified".into(),
    };
    let findings = &document.findings;
    let mut failed: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.status == FindingStatus::Failed)
        .collect();
    // Worst first.
    failed.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let passed = findings
        .iter()
        .filter(|f| f.status == FindingStatus::Passed)
        .count();
    let submitter = document.submitter_waivers.as_ref();
    let rows: String = failed
        .iter()
        .map(|f| {
            let severity = f.severity.as_str();
            let waived = if f.ignored {
                " <span class=\"waived\">accepted</span>"
            } else if submitter.is_some_and(|s| s.hides(&f.id)) {
                " <span class=\"waived\">waived by the submitter</span>"
            } else {
                ""
            };
            format!(
                "<tr class=\"{severity}\"><td><span class=\"severity {severity}\">{severity}</span></td>\
                 <td><code>{id}</code>{waived}</td><td>{detail}</td><td>{remediation}</td></tr>\n",
                id = escape(&f.id),
                detail = escape(&f.detail),
                remediation = escape(&f.remediation),
            )
        })
        .collect();
    let findings_html = if failed.is_empty() {
        format!("<p>No check failed ({passed} passed).</p>")
    } else {
        format!(
            "<p>{} checks failed, {passed} passed.</p>\n<table class=\"findings\">\n\
             <thead><tr><th>Severity</th><th>Check</th><th>What was seen</th><th>How to fix it</th></tr></thead>\n\
             <tbody>\n{rows}</tbody>\n</table>",
            failed.len()
        )
    };
    let plan: String = document
        .remediation_plan
        .steps
        .iter()
        .take(20)
        .map(|step| format!("<li>{}</li>\n", escape(&step.action)))
        .collect();
    let plan_html = if plan.is_empty() {
        String::new()
    } else {
        format!("<h2>Remediation plan</h2>\n<ol class=\"plan\">\n{plan}</ol>")
    };
    let snippets_html = snippet_tabs(&document.remediation_plan.snippets);
    let exports: String = EXPORT_FORMATS
        .iter()
        .map(|f| {
            let class = if preferred == Some(*f) {
                "export preferred"
            } else {
                "export"
            };
            format!(
                "<a class=\"{class}\" href=\"{root}/api/scans/{}/export/{f}\">{}</a>",
                escape(uuid),
                f.to_uppercase()
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "<section class=\"summary\" data-scan=\"{uuid}\">\n\
         <div class=\"grade {grade_class}\">{grade}</div>\n<div>\n\
         <h1>{host}</h1>\n<p class=\"state {state_class}\">{state}</p>\n<p>{message}</p>\n\
         <p>{product} · scanned {scanned}</p>\n{submitter_line}</div>\n</section>\n\
         <h2>Findings</h2>\n{findings_html}\n{plan_html}\n{snippets_html}\
         <h2>Download</h2>\n<p class=\"exports\">{exports}</p>\n\
         <p><a href=\"{root}/\">Check another instance</a></p>",
        grade = escape(if grade.is_empty() { "U" } else { grade }),
        submitter_line = submitter
            .map(|s| {
                format!(
                    "<p class=\"submitter-grade\">The grade and state above are without the \
                     submitter's waivers. With them ({}): grade <strong>{}</strong>, state {}.</p>\n",
                    s.patterns
                        .iter()
                        .map(|p| format!("<code>{}</code>", escape(p)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    escape(&s.grade),
                    escape(s.state.label()),
                )
            })
            .unwrap_or_default(),
        host = escape(&document.host),
        message = escape(&document.message),
        scanned = escape(&document.scanned_at.to_string()),
        uuid = escape(uuid),
    )
}

/// A tab's label for each form a fix snippet is written in.
fn form_label(form: Form) -> &'static str {
    match form {
        Form::Nginx => "nginx",
        Form::Caddy => "Caddy",
        Form::Apache => "Apache",
        Form::Traefik => "Traefik",
        Form::Env => "Environment",
        Form::Zone => "DNS zone",
    }
}

/// The plan's merged fix snippets, one tab per form that has one, the first shown. The tabs
/// are radio buttons that the style sheet turns into tabs (`:checked ~`): no script, and
/// without the style sheet every form shows one after the other.
fn snippet_tabs(snippets: &[Snippet]) -> String {
    let of = |form: Form| -> Vec<&Snippet> { snippets.iter().filter(|s| s.form == form).collect() };
    let forms: Vec<(Form, Vec<&Snippet>)> = Form::ALL
        .iter()
        .copied()
        .map(|form| (form, of(form)))
        .filter(|(_, snippets)| !snippets.is_empty())
        .collect();
    if forms.is_empty() {
        return String::new();
    }
    let tabs: String = forms
        .iter()
        .enumerate()
        .map(|(n, (form, _))| {
            format!(
                "<input type=\"radio\" name=\"snippets\" id=\"snippets-{name}\"{checked}>\
                 <label for=\"snippets-{name}\">{label}</label>\n",
                name = form.as_str(),
                checked = if n == 0 { " checked" } else { "" },
                label = form_label(*form),
            )
        })
        .collect();
    let panels: String = forms
        .iter()
        .map(|(form, snippets)| {
            let files: String = snippets
                .iter()
                .map(|s| {
                    format!(
                        "<p class=\"file\">{}:</p>\n<pre><code>{}</code></pre>\n",
                        escape(&s.file),
                        escape(&s.text),
                    )
                })
                .collect();
            format!("<div class=\"panel {}\">\n{files}</div>\n", form.as_str())
        })
        .collect();
    format!(
        "<h2 id=\"snippets\">Fix snippets</h2>\n<p>The plan's changes in the syntax of the file \
         that has to change, ready to paste.</p>\n<div class=\"tabs\">\n{tabs}{panels}</div>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A document as the plugin writes it, with the members given (and those every document
    /// has).
    fn document(members: Value) -> ScanResult {
        let mut value = json!({"host": "cloud.example.com", "scannedAt": "2026-11-25T10:00:00Z",
                               "state": "OK", "findings": [], "waivers": []});
        for (key, member) in members.as_object().unwrap() {
            value[key] = member.clone();
        }
        crate::report::read_document(value.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn everything_from_a_server_is_escaped() {
        let html = render_result(
            "",
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            &document(json!({
                "host": "<script>alert(1)</script>",
                "state": "CRITICAL", "grade": "D", "message": "\"><img src=x onerror=alert(1)>",
                "product": {"family": "opencloud", "name": "OpenCloud", "version": "4.0.0</p>"},
                "findings": [{"id": "exposed:/<b>", "status": "failed", "severity": "high",
                              "detail": "a & b", "remediation": "'quote'", "ignored": false}],
            })),
            None,
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("a &amp; b") && html.contains("&#39;quote&#39;"));
        assert!(html.contains("4.0.0&lt;/p&gt;"));
    }

    #[test]
    fn failed_findings_come_worst_first_with_their_remediation() {
        let html = render_result(
            "",
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            &document(json!({
                "host": "cloud.example.com", "state": "WARNING", "grade": "C",
                "findings": [
                    {"id": "cspPresent", "status": "failed", "severity": "low", "detail": "d1", "remediation": "r1"},
                    {"id": "tlsTrusted", "status": "failed", "severity": "high", "detail": "d2", "remediation": "r2"},
                    {"id": "hsts", "status": "passed", "severity": "medium"},
                ],
            })),
            Some("csv"),
        );
        let high = html.find("tlsTrusted").unwrap();
        let low = html.find("cspPresent").unwrap();
        assert!(high < low);
        assert!(html.contains("2 checks failed, 1 passed."));
        assert!(!html.contains("<code>hsts</code>"));
        for format in EXPORT_FORMATS {
            assert!(html.contains(&format!("/export/{format}\"")));
        }
        assert!(html.contains("data-scan=\"0f8fad5b-d9cb-469f-a165-70867728950e\""));
        assert!(html.contains("class=\"export preferred\" href=\"/api/scans/0f8fad5b-d9cb-469f-a165-70867728950e/export/csv\""));
    }

    #[test]
    fn snippets_get_a_tab_per_form_that_has_one_every_value_escaped() {
        let snippet = |form: Form, file: &str, text: &str| Snippet {
            form,
            file: file.into(),
            text: text.into(),
        };
        let html = snippet_tabs(&[
            snippet(Form::Nginx, "server block", "proxy_hide_header X-A</pre>;"),
            snippet(Form::Nginx, "http block", "b"),
            snippet(Form::Zone, "the <zone>", "x. IN CAA 0 issue \"ca\""),
        ]);
        let tabs: Vec<&str> = html.matches("<input type=\"radio\"").collect();
        assert_eq!(tabs.len(), 2, "{html}");
        assert!(html.contains("id=\"snippets-nginx\" checked>"), "{html}");
        assert!(html.contains("id=\"snippets-zone\">"), "{html}");
        assert!(html.contains("<code>proxy_hide_header X-A&lt;/pre&gt;;</code>"));
        assert!(html.contains("<p class=\"file\">http block:</p>"));
        assert!(html.contains("the &lt;zone&gt;:") && html.contains("&quot;ca&quot;"));
        assert!(!html.contains("<script>"));
        assert_eq!(snippet_tabs(&[]), "");
        // A form no tab knows never reaches a page: a document naming one is not read.
        let unknown = json!({"host": "h", "scannedAt": "t", "state": "OK", "findings": [],
            "waivers": [], "remediationPlan": {"snippets": [
                {"for": "<script>", "file": "f", "text": "never shown"}]}});
        assert!(crate::report::read_document(unknown.to_string().as_bytes()).is_err());
    }

    #[test]
    fn the_policy_allows_no_inline_code() {
        assert!(!CSP.contains("unsafe-inline") && !CSP.contains("unsafe-eval"));
        assert!(!STYLE.is_empty() && !SCRIPT.is_empty() && !WEBMCP.is_empty());
        let landing = page(200, "t", &form("", None, "\"x"), "", "", true);
        let html = String::from_utf8(landing.body).unwrap();
        assert!(!html.contains(" style=") && !html.contains(" onclick="));
        assert!(html.contains("value=\"&quot;x\""));
    }
}

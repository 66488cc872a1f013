//! DNS fixes: zone-file lines for the scanned name.

use super::*;

/// CAA domains of well-known CAs, by a word of the certificate issuer.
pub(super) const CAA_DOMAINS: &[(&str, &str)] = &[
    ("let's encrypt", "letsencrypt.org"),
    ("zerossl", "sectigo.com"),
    ("sectigo", "sectigo.com"),
    ("digicert", "digicert.com"),
    ("globalsign", "globalsign.com"),
    ("google trust services", "pki.goog"),
    ("amazon", "amazon.com"),
    ("buypass", "buypass.com"),
];

pub(super) fn caa_record(ctx: &Ctx) -> Vec<Part> {
    let Some(host) = ctx.host.as_ref().filter(|h| !h.address) else {
        return Vec::new();
    };
    let issuer = ctx.issuer.as_deref().unwrap_or("").to_ascii_lowercase();
    let known = CAA_DOMAINS
        .iter()
        .find(|(word, _)| issuer.contains(word))
        .map(|(_, domain)| *domain);
    let mut entries = vec![line(match known {
        Some(_) => "; only the CA that issues the instance's certificate may issue for the name",
        None => {
            "; letsencrypt.org is Let's Encrypt: name the CAA domain of the CA that issues \
                 the instance's certificate instead"
        }
    })];
    entries.push(line(format!(
        "{}. IN CAA 0 issue \"{}\"",
        host.name,
        known.unwrap_or("letsencrypt.org")
    )));
    if let Some((_, parent)) = host.name.split_once('.')
        && parent.contains('.')
    {
        entries.push(line(format!(
            "; or the same record on {parent}. covers every name below it"
        )));
    }
    vec![part(Place::Zone, entries)]
}

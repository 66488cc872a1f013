//! Warnings for secrets written in clear on the command line.

use super::*;

/// A warning for each secret written in clear on the command line (`--token VALUE`,
/// `--mcp-token VALUE`, a password in `--store redis://:pw@host`), which every user of the host
/// reads in `ps` and which shell histories keep. It is no refusal, since the operator may have
/// no other way at hand, but it names the form that keeps the value out of sight.
pub(super) fn secrets_in_clear_on_the_command_line(
    l: &Layers,
) -> Result<Vec<String>, SettingsError> {
    let mut warnings = Vec::new();
    for id in [Id::token, Id::mcp_token, Id::store] {
        let spec = options::spec(id);
        let Some((values, Source::Flag)) = l.raw(spec)? else {
            continue;
        };
        let in_clear = values.iter().any(|given| {
            given.reference.is_none() && (id != Id::store || url_has_password(&given.text))
        });
        if in_clear {
            let what = if id == Id::store {
                "the store's password"
            } else {
                "the token"
            };
            warnings.push(format!(
                "warning: {} on the command line shows {what} to every user of this host (ps, \
                 /proc) and to shell histories; give it as a reference instead: \
                 secret://NAME (a systemd credential), file:///PATH or env://NAME",
                spec.display_name()
            ));
        }
    }
    Ok(warnings)
}

/// Whether a store address carries a password: `redis://user:pw@host` or
/// `redis+unix:///socket?pass=pw`.
pub(super) fn url_has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let in_userinfo = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty()));
    let in_query = rest.split_once('?').is_some_and(|(_, query)| {
        query.split(['&', '#']).any(|pair| {
            pair.split_once('=').is_some_and(|(name, value)| {
                !value.is_empty()
                    && (name.eq_ignore_ascii_case("pass") || name.eq_ignore_ascii_case("password"))
            })
        })
    });
    in_userinfo || in_query
}

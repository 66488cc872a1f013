//! What a scan and its verdict read: the scan configuration, the thresholds, the proxy, the
//! update source, the waivers and the targets.

use super::*;
use crate::knowledge::update::UpdateMode;

/// What a scan reads of the settings besides the assessment's rules, read in the order of the
/// manual.
pub(super) fn scan_config(l: &Layers) -> Result<crate::scanner::Config, SettingsError> {
    let mut config = crate::scanner::Config {
        concurrency: l.value(Id::concurrency)?,
        insecure: l.switch(Id::insecure)? || !l.switch(Id::verify_tls)?,
        ca_file: l.operator_file(Id::ca_file, crate::files::Kind::CaBundle)?,
        proxy: proxy(l)?,
        timeout: l.value(Id::timeout)?,
        retries: l.value(Id::retries)?,
        backoff_factor: l.value(Id::backoff_factor)?,
        update_source: update_source(l)?,
        target_port: l.optional(Id::target_port)?,
        debug_ports: if !l.switch(Id::no_debug_ports)? && l.switch(Id::check_debug_ports)? {
            l.parsed_or_default(Id::debug_ports, parse_ports)?
        } else {
            Vec::new()
        },
        debug_ports_given: l.given(Id::debug_ports)?.is_some(),
        debug_port_timeout: l.value(Id::debug_port_timeout)?,
        release_token: None,
        releases_url: l.string(Id::releases_url)?,
        feed_cache_ttl: l.value(Id::feed_cache_ttl)?,
        state_dir: l
            .string(Id::state_dir)?
            .map(PathBuf::from)
            .or_else(|| state_dir::default_state_dir(l.env)),
        release_schedule: l
            .operator_file(Id::release_schedule, crate::files::Kind::ReleaseSchedule)?,
        vulnerability_db: l
            .named_operator_files(Id::vulnerability_db, crate::files::Kind::AdvisoryFile)?
            .into_iter()
            .map(|file| file.path)
            .collect(),
        vulnerability_feed: l.string(Id::vulnerability_feed)?,
        extra_checks: !l.switch(Id::no_extra_checks)?,
        all_addresses: l.switch(Id::all_addresses)? || l.switch(Id::check_all_addresses)?,
        ipv6_enabled: l.switch(Id::ipv6_enabled)?,
        dns_server: l.parsed(Id::dns_server, |t| {
            t.parse::<std::net::SocketAddr>()
                .ok()
                .or_else(|| t.parse::<std::net::IpAddr>().ok().map(|ip| (ip, 53).into()))
        })?,
        login_throttling: l.switch(Id::login_throttling)?
            || l.switch(Id::check_login_throttling)?,
    };
    // Read only where the feed is asked: a run that never asks it needs no credential.
    if matches!(
        config.update_source,
        UpdateSource::Auto | UpdateSource::Feed
    ) {
        config.release_token = l.string(Id::release_token)?;
    }
    Ok(config)
}

/// `--critical`, which must not exceed `--warning`.
pub(super) fn critical_within_warning(l: &Layers, warning: u8) -> Result<u8, SettingsError> {
    let critical: u8 = l.value(Id::critical)?;
    if critical <= warning {
        return Ok(critical);
    }
    // Each as it was given; one read from a reference by its reference.
    let named = |id: Id, value: u8| -> Result<String, SettingsError> {
        Ok(match l.given(id)? {
            Some(given) => match &given.reference {
                Some(reference) => format!("{} (from {reference})", given.name),
                None => format!("{} {value}", given.name),
            },
            None => format!("--{} {value} (the default)", id.name()),
        })
    };
    Err(SettingsError(format!(
        "{} exceeds {}; both are ratings 0-5 and critical must be at or below warning",
        named(Id::critical, critical)?,
        named(Id::warning, warning)?,
    )))
}

/// `--proxy`, checked here so that a wrong one is refused before any traffic.
pub(super) fn proxy(l: &Layers) -> Result<Option<String>, SettingsError> {
    let proxy = l.given(Id::proxy)?;
    if let Some(given) = &proxy {
        let shown = match &given.reference {
            Some(_) => given.shown(),
            None => format!("{:?}", crate::net::proxy::redacted(given.text.trim())),
        };
        crate::net::proxy::Proxy::parse_shown(given.text.trim(), &shown)?;
    }
    Ok(proxy.map(|g| g.text))
}

/// `--update-source`, with `--no-update-check` and the version `pinned` needs.
pub(super) fn update_source(l: &Layers) -> Result<UpdateSource, SettingsError> {
    let latest_version = l.parsed(Id::latest_version, crate::knowledge::parse_version)?;
    let update_source = if l.switch(Id::no_update_check)? {
        UpdateSource::Off
    } else {
        let mode: Option<UpdateMode> = l.chosen(Id::update_source)?;
        match mode.unwrap_or(UpdateMode::Auto) {
            UpdateMode::Feed => UpdateSource::Feed,
            UpdateMode::Bundled => UpdateSource::Bundled,
            UpdateMode::Off => UpdateSource::Off,
            UpdateMode::Pinned => {
                UpdateSource::Pinned(latest_version.clone().ok_or_else(|| {
                    SettingsError(
                        "--update-source pinned needs --latest-version VERSION (the newest \
                     release to compare with)"
                            .to_string(),
                    )
                })?)
            }
            UpdateMode::Auto => UpdateSource::Auto,
        }
    };
    if latest_version.is_some() && !matches!(update_source, UpdateSource::Pinned(_)) {
        return Err(SettingsError(
            "--latest-version is only used with --update-source pinned; add \
             --update-source pinned or remove --latest-version"
                .to_string(),
        ));
    }
    Ok(update_source)
}

/// The waivers of `--ignore-hardening` and `--waive-until`.
pub(super) fn waivers(l: &Layers) -> Result<Vec<crate::assess::waivers::Waiver>, SettingsError> {
    use crate::assess::waivers::Waiver;
    // A waiver names where it was given: the flag, or the variable (COS_IGNORE_HARDENING,
    // COS_WAIVE_UNTIL) that a CI step sets.
    let source = |id: Id, flag: &'static str| -> Result<&'static str, SettingsError> {
        let spec = options::spec(id);
        Ok(match l.raw(spec)? {
            Some((_, Source::Variable)) => spec.env[0],
            _ => flag,
        })
    };
    let ignore_source = source(Id::ignore_hardening, "--ignore-hardening")?;
    let until_source = source(Id::waive_until, "--waive-until")?;
    let mut waivers: Vec<Waiver> = l
        .comma_list(Id::ignore_hardening)?
        .iter()
        .map(|p| Waiver::permanent(p, ignore_source))
        .collect();
    for given in l.given_list(Id::waive_until)? {
        let mut waiver = Waiver::parse_until(&given.text).map_err(|e| {
            // Named the way it was given: `COS_WAIVE_UNTIL expiry ...`.
            let e = match e.strip_prefix("--waive-until") {
                Some(rest) => format!("{}{rest}", given.name),
                None => e,
            };
            SettingsError(given.scrub(&e))
        })?;
        waiver.source = until_source;
        waivers.push(waiver);
    }
    Ok(waivers)
}

/// `--diff-format`, which needs `--baseline`.
pub(super) fn diff_format(l: &Layers) -> Result<Option<DiffFormat>, SettingsError> {
    let diff_format: Option<DiffFormat> = l.chosen(Id::diff_format)?;
    if diff_format.is_some() && l.string(Id::baseline)?.is_none() {
        return Err(SettingsError(
            "--diff-format reports the changes since a baseline; add --baseline FILE (the \
             first run records it) or remove --diff-format"
                .into(),
        ));
    }
    Ok(diff_format)
}

/// The most targets one run takes (`-H` and `--host-list` together): a night's fleet, with
/// room, and a bound on what a wrong file can make a run hold.
pub const MAX_TARGETS: usize = 100_000;

/// The targets of `-H` (each once, in the order given), then those of `--host-list`. Given in
/// one layer, both count; in two, the stronger layer's replace the other's (a `-H` on the
/// command line replaces a configuration file's `host_list`, as it replaces its `host`).
pub(super) fn targets(l: &Layers) -> Result<Vec<Target>, SettingsError> {
    let hosts = l.raw(options::spec(Id::host))?;
    let list = l.raw(options::spec(Id::host_list))?;
    let (hosts, list) = match (hosts, list) {
        (Some(hosts), Some(list)) if hosts.1 < list.1 => (Some(hosts), None),
        (Some(hosts), Some(list)) if list.1 < hosts.1 => (None, Some(list)),
        both => both,
    };
    let mut targets = Targets::default();
    for given in hosts.map(|(values, _)| values).unwrap_or_default() {
        // A secret read as a host name would be sent to DNS servers: targets are written
        // literally.
        if let Some(reference) = &given.reference {
            return Err(SettingsError(format!(
                "{} is given as the reference {reference}; targets are not read from secret \
                 references (a target goes to DNS): write the host itself",
                given.name
            )));
        }
        if given.text.trim().is_empty() {
            continue;
        }
        for target in target::parse_list(&given.text).map_err(|e| SettingsError(e.to_string()))? {
            targets.add(target)?;
        }
    }
    let kind = crate::files::Kind::HostList;
    let file = list.and_then(|(mut values, _)| values.pop());
    let file = file.filter(|given| !given.text.trim().is_empty());
    if let Some(file) = file.map(|given| named_file(&given, kind)).transpose()? {
        let bytes = crate::files::read(&file.path, kind)
            .map_err(|refusal| SettingsError(refusal.line(&file.shown)))?;
        // `files::read` refuses what is not UTF-8.
        let text = String::from_utf8_lossy(&bytes);
        for (number, line) in text.lines().enumerate() {
            let entry = without_comment(line).trim();
            if entry.is_empty() {
                continue;
            }
            let parsed = target::parse_list(entry).map_err(|e| {
                SettingsError(format!(
                    "host list {}, line {}: {e}",
                    file.shown,
                    number + 1
                ))
            })?;
            for target in parsed {
                targets.add(target)?;
            }
        }
    }
    if targets.list.is_empty() {
        return Err(SettingsError(
            "no target given; pass -H/--host or --host-list (or set COS_HOST)".to_string(),
        ));
    }
    Ok(targets.list)
}

/// A line of a host list without its comment: from a `#` at its start or after white space
/// (a URL's `#` is no comment, and no target either).
fn without_comment(line: &str) -> &str {
    let mut previous_blank = true;
    for (at, c) in line.char_indices() {
        if c == '#' && previous_blank {
            return &line[..at];
        }
        previous_blank = c.is_whitespace();
    }
    line
}

/// Targets in the order given, each once: the same name, scheme and base path is one target
/// (scanned twice, it would collide in the performance data).
#[derive(Default)]
struct Targets {
    list: Vec<Target>,
    seen: std::collections::HashSet<(String, Option<crate::target::Scheme>, String)>,
}

impl Targets {
    fn add(&mut self, target: Target) -> Result<(), SettingsError> {
        let key = (
            target.display_name(),
            target.scheme,
            target.base_path.clone(),
        );
        if self.seen.insert(key) {
            if self.list.len() == MAX_TARGETS {
                return Err(SettingsError(format!(
                    "more than {MAX_TARGETS} targets; split them over several runs"
                )));
            }
            self.list.push(target);
        }
        Ok(())
    }
}

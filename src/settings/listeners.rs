//! Where the servers listen: addresses, networks and the exporter's settings.

use super::*;

/// `10.0.0.0/8` or a lone address (its full length); `None` when it is neither.
pub fn parse_cidr(text: &str) -> Option<(std::net::IpAddr, u8)> {
    let (address, length) = match text.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (text, None),
    };
    let address = ip_address(address.trim())?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    let length = match length {
        Some(l) => l.trim().parse::<u8>().ok().filter(|l| *l <= max)?,
        None => max,
    };
    Some((address, length))
}

/// The metrics exporter's settings; present only when the exporter runs.
#[derive(Clone, Debug)]
pub struct ExporterSettings {
    /// Where `/metrics` is served: `--prometheus-listen-addr` and `--prometheus-listen-port`
    /// (port 0: a free port).
    pub listen: std::net::SocketAddr,
    /// `--scrape-interval`: from the start of one round to the start of the next.
    pub scrape_interval: Duration,
}

/// A server's address: `listen_id` (`ADDRESS[:PORT]`, a port written there wins) and
/// `port_id` (0: a free port, named on stderr at start).
pub(super) fn listen_address(
    l: &Layers,
    listen_id: Id,
    port_id: Id,
) -> Result<std::net::SocketAddr, SettingsError> {
    let (ip, port_in_listen) = l.parsed_or_default(listen_id, |t| {
        if let Ok(socket) = t.parse::<std::net::SocketAddr>() {
            return Some((socket.ip(), Some(socket.port())));
        }
        ip_address(t).map(|ip| (ip, None))
    })?;
    let port = l.value(port_id)?;
    Ok(std::net::SocketAddr::new(
        ip,
        port_in_listen.unwrap_or(port),
    ))
}

/// An IP address, IPv6 with or without brackets.
pub(super) fn ip_address(text: &str) -> Option<std::net::IpAddr> {
    text.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// The exporter runs when its port is set (flag, variable or key). Its address and interval
/// are read in every run, so a wrong value is refused wherever it stands; a file shared with
/// single runs may hold them. On the command line they can only mean the exporter, so there
/// they need the port, and the flags of single runs are refused beside it.
pub(super) fn exporter_settings(
    l: &Layers,
    format: Format,
) -> Result<Option<ExporterSettings>, SettingsError> {
    let address = l.parsed_or_default(Id::prometheus_listen_addr, ip_address)?;
    let scrape_interval = l.value(Id::scrape_interval)?;
    let port = l.optional(Id::prometheus_listen_port)?;
    let given = |id: Id| !l.cli.all(id).is_empty();
    let Some(port) = port else {
        for id in [Id::prometheus_listen_addr, Id::scrape_interval] {
            if given(id) {
                let flag = options::spec(id).display_name();
                return Err(SettingsError(format!(
                    "{flag} configures the metrics exporter, which only --prometheus-listen-port \
                     starts; add --prometheus-listen-port 9102 or remove {flag}"
                )));
            }
        }
        return Ok(None);
    };
    for id in [Id::baseline, Id::warn_on_new, Id::verify_remediation] {
        if given(id) {
            return Err(SettingsError(format!(
                "{} belongs to single runs, not to the metrics exporter \
                 (--prometheus-listen-port); remove one of them",
                options::spec(id).display_name()
            )));
        }
    }
    if given(Id::format) && format != Format::Metrics {
        return Err(SettingsError(
            "the metrics exporter (--prometheus-listen-port) serves the metrics format on \
             /metrics; remove --format"
                .to_string(),
        ));
    }
    Ok(Some(ExporterSettings {
        listen: std::net::SocketAddr::new(address, port),
        scrape_interval,
    }))
}

//! What each component reads of its own, besides what every component shares (`Settings`):
//! one type per component, so the scan service cannot read the public API's store, nor
//! `fleet` a server's token. A face names its type (`Settings<ServeSettings>`) and the compiler
//! holds it to the fields of that type; a row of another component is never read.

use super::*;

/// What one or more components read of their own: `Settings::own`.
pub trait ComponentSettings: Sized + Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The components that read exactly these (each component is in one list).
    const COMPONENTS: &'static [Component];

    /// Reads them, at their place in the order of `Settings` (after the shared scan settings).
    fn read(l: &Layers) -> Result<Self, SettingsError>;

    /// The rules over several values the component needs before it starts
    /// (`start_rules`), each with the row whose value breaks it; none by default.
    fn start_refusals(&self) -> Vec<(Id, String)> {
        Vec::new()
    }
}

/// The plugin, `scan` and `--upgrade-self` read nothing of their own.
impl ComponentSettings for () {
    const COMPONENTS: &'static [Component] =
        &[Component::Plugin, Component::Scan, Component::Upgrade];

    fn read(_: &Layers) -> Result<(), SettingsError> {
        Ok(())
    }
}

settings_struct! {
    /// `check-storage-scanner serve`: the scan service.
    #[derive(Clone, Debug)]
    pub struct ServeSettings read from l {
        let address = listen_address(l, Id::listen, Id::port)?;
        /// `--listen`: the address `serve` listens on.
        pub listen: std::net::IpAddr = { address.ip() },
        /// `--port`, or the port written in `--listen` (which wins).
        pub port: u16 = { address.port() },
        /// `--token`: the bearer token of `/api/` calls (a secret: never printed).
        pub token: Option<String> = string,
        /// `service.cache_ttl`: how long a host's result is served from the cache.
        pub cache_ttl: Duration = value,
    }
}

impl ComponentSettings for ServeSettings {
    const COMPONENTS: &'static [Component] = &[Component::Serve];

    fn read(l: &Layers) -> Result<Self, SettingsError> {
        ServeSettings::read(l)
    }

    fn start_refusals(&self) -> Vec<(Id, String)> {
        start_rules::serve(self)
    }
}

settings_struct! {
    /// `check-storage-scanner web`, the public scan API, and `limits`, which opens its store.
    #[derive(Clone, Debug)]
    pub struct WebSettings read from l {
        /// `--listen` with its port, else `--port`, else 8080.
        pub listen: std::net::SocketAddr = { listen_address(l, Id::web_listen, Id::web_port)? },
        /// `--base-url`, without a trailing slash; `None`: `http://<listen>`.
        pub base_url: Option<String> = {
            l.parsed(Id::base_url, |t| {
                // Kept without a trailing slash: routes are appended to it.
                let t = t.trim_end_matches('/');
                let rest = t
                    .strip_prefix("https://")
                    .or_else(|| t.strip_prefix("http://"))?;
                let host = rest.split('/').next().unwrap_or_default();
                (!host.is_empty() && !rest.contains(['?', '#', ' ', '"', '<', '>', '\\']))
                    .then(|| t.to_string())
            })?
        },
        /// `--store`: `sqlite:PATH` or `redis://...`; `None`: SQLite in the state directory.
        pub store: Option<String> = string,
        /// `--store-timeout`: the deadline of one store call.
        pub store_timeout: Duration = value,
        pub workers: usize = value,
        pub connections_per_address: usize = value,
        pub record_ttl: Duration = value,
        /// `--trusted-proxy`: (network, prefix length).
        pub trusted_proxies: Vec<(std::net::IpAddr, u8)> = {
            l.entries(Id::trusted_proxy, parse_cidr)?
        },
        pub allow_private_targets: bool = switch,
        /// `--mcp-token`: the bearer token `/mcp` requires (a secret: never printed).
        pub mcp_token: Option<String> = string,
        /// Not `--no-mcp`.
        pub mcp: bool = { !l.switch(Id::no_mcp)? },
    }
}

impl ComponentSettings for WebSettings {
    const COMPONENTS: &'static [Component] = &[Component::Web, Component::Limits];

    fn read(l: &Layers) -> Result<Self, SettingsError> {
        WebSettings::read(l)
    }

    fn start_refusals(&self) -> Vec<(Id, String)> {
        start_rules::web(self)
    }
}

/// The result documents a subcommand that reads saved results was given (`--result`).
pub trait ReadsResults: ComponentSettings {
    fn results(&self) -> &[NamedFile];
}

/// Declares the settings of a subcommand that reads saved result documents: `--result` and
/// whatever else it reads.
macro_rules! results_settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident for $component:ident read from $l:ident {
            $($(#[$field_meta:meta])* pub $field:ident: $type:ty = $read:tt,)*
        }
    ) => {
        settings_struct! {
            $(#[$meta])*
            #[derive(Clone, Debug)]
            pub struct $name read from $l {
                /// `--result`: the result documents it reads.
                pub results: Vec<NamedFile> = {
                    $l.named_operator_files(Id::result, crate::files::Kind::ResultDocument)?
                },
                $($(#[$field_meta])* pub $field: $type = $read,)*
            }
        }

        impl ComponentSettings for $name {
            const COMPONENTS: &'static [Component] = &[Component::$component];

            fn read(l: &Layers) -> Result<Self, SettingsError> {
                $name::read(l)
            }
        }

        impl ReadsResults for $name {
            fn results(&self) -> &[NamedFile] {
                &self.results
            }
        }
    };
}

results_settings! {
    /// `check-storage-scanner review-waivers`.
    pub struct ReviewSettings for ReviewWaivers read from l {}
}

results_settings! {
    /// `check-storage-scanner snippets`.
    pub struct SnippetsSettings for Snippets read from l {
        /// `--for`: the one form it prints; `None`: every form.
        pub form: Option<crate::assess::snippets::Form> = { l.chosen(Id::snippets_for)? },
    }
}

results_settings! {
    /// `check-storage-scanner fleet`: besides its paths, the files of `--result`.
    pub struct FleetSettings for Fleet read from l {
        /// `fleet --format json`: the judgement as JSON instead of the table.
        pub json: bool = { l.chosen(Id::fleet_format)? == Some(FleetFormat::Json) },
    }
}

crate::vocabulary::vocabulary! {
    /// `fleet --format`: the judgement as a table or as JSON.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum FleetFormat {
        Text = "text",
        Json = "json",
    }
}

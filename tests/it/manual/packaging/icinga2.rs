//! The Icinga 2 `CheckCommand` for the plugin: every flag a monitoring check can use is an
//! argument fed by a custom variable `storage_security_<id>` (the option table's id), so a
//! Host or Service sets `vars.storage_security_eol_warning = 30` instead of writing flags.

use super::flags;
use storage_security::settings::options::{Kind, OptionSpec, Program};

/// The command's name in Icinga.
pub const COMMAND: &str = "storage_security";

/// Flags that are not part of a check: they start another program (the exporter, the wizard,
/// an upgrade), print something else than the monitoring verdict, or only explain the program.
const NOT_A_CHECK: &[(&str, &str)] = &[
    ("format", "Icinga reads the default monitoring output"),
    ("verify-remediation", "an on-demand recheck, not a verdict"),
    ("prometheus-listen-port", "starts the long-running exporter"),
    ("prometheus-listen-addr", "starts the long-running exporter"),
    ("scrape-interval", "starts the long-running exporter"),
    ("configure", "the interactive wizard"),
    ("upgrade-self", "replaces the binary"),
    ("check-only", "goes with --upgrade-self"),
    ("version", "prints the version"),
    ("help", "prints the manual"),
];

/// The flags of the plugin that the CheckCommand carries.
pub fn arguments() -> impl Iterator<Item = &'static OptionSpec> {
    flags(Program::Plugin).filter(|o| !NOT_A_CHECK.iter().any(|(l, _)| o.long == Some(*l)))
}

/// The custom variable feeding a flag.
pub fn variable(o: &OptionSpec) -> String {
    format!("storage_security_{}", o.id)
}

/// An Icinga 2 string literal (no macros are resolved in descriptions).
fn string(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "\"{}\"",
        one_line.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

pub fn configuration() -> String {
    let mut out = String::from(
        "// Icinga 2 CheckCommand for check-storage-security. Generated from the option table by
// `make man`; do not edit. The Debian package installs it in
// /usr/share/icinga2/include/plugins-contrib.d/, which the default icinga2.conf loads with
// `include <plugins-contrib>`, and links the plugin into PluginDir.
//
// Every flag of a check is an argument fed by a custom variable named after it:
// vars.storage_security_<name> (e.g. storage_security_eol_warning = 30,
// storage_security_check_hardening = true, storage_security_waive_until = [ \"...\", \"...\" ]).
// Not carried: ",
    );
    out.push_str(
        &NOT_A_CHECK
            .iter()
            .map(|(flag, why)| format!("--{flag} ({why})"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push_str(
        ".
// Give secrets (release token, webhook URL and headers) as references (env://, file://,
// secret://): a check's arguments are visible in the process list and in Icinga's API.
",
    );
    out.push_str(&format!(
        "object CheckCommand {} {{\n  command = [ PluginDir + \"/check-storage-security\" ]\n\n  arguments = {{\n",
        string(COMMAND)
    ));
    for o in arguments() {
        let flag = format!("--{}", o.long.unwrap_or_default());
        let variable = variable(o);
        let description = string(o.help);
        let body = match o.kind {
            Kind::Switch => format!("set_if = \"${variable}$\""),
            Kind::Value(..) => format!("value = \"${variable}$\""),
            Kind::Repeatable(..) => format!("value = \"${variable}$\"\n      repeat_key = true"),
        };
        let required = if o.id == "host" {
            "\n      required = true"
        } else {
            ""
        };
        out.push_str(&format!(
            "    {} = {{\n      {body}{required}\n      description = {description}\n    }}\n",
            string(&flag)
        ));
    }
    out.push_str(
        "  }

  vars.storage_security_host = \"$host.name$\"
  // The plugin ends the run UNKNOWN, naming the slow host, within its time budget; keep the
  // budget below the command's timeout so Icinga never kills it with a bare timeout.
  vars.storage_security_time_budget = 55

  timeout = 60
}

// An example service (put it in your own configuration): scan every host that carries
// vars.storage_instance = true, four times a day.
//
// apply Service \"storage-security\" {
//   check_command = \"storage_security\"
//   check_interval = 6h
//   retry_interval = 30m
//   vars.storage_security_eol_warning = 30
//   assign where host.vars.storage_instance
// }
",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_flag_is_an_argument_with_its_variable() {
        let conf = configuration();
        for o in arguments() {
            let flag = format!("\"--{}\" = {{", o.long.unwrap());
            assert!(conf.contains(&flag), "{flag} missing");
            assert!(conf.contains(&format!("\"${}$\"", variable(o))));
        }
        assert!(conf.contains(
            "\"--check-hardening\" = {\n      set_if = \"$storage_security_check_hardening$\""
        ));
        assert!(
            conf.contains("value = \"$storage_security_waive_until$\"\n      repeat_key = true")
        );
        assert!(!conf.contains("\"--prometheus-listen-port\""));
        assert!(!conf.contains("\"--upgrade-self\""));
    }

    #[test]
    fn every_excluded_flag_exists() {
        for (flag, _) in NOT_A_CHECK {
            assert!(
                flags(Program::Plugin).any(|o| o.long == Some(*flag)),
                "--{flag} is not a plugin flag"
            );
        }
    }
}

//! Performance data of one host (spec "Performance data metrics"): values and the threshold
//! carrying rules. Every format that shows metrics reads them from here.

use super::Thresholds;
use crate::report::ScanResult;

/// One metric: `<name>=<value>[unit];<warn>;<crit>;<min>;<max>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    /// Formatted value; `U` when unknown.
    pub value: String,
    pub unit: &'static str,
    pub warn: String,
    pub crit: String,
    pub min: String,
    pub max: String,
}

impl Metric {
    fn new(name: &'static str, value: impl ToString) -> Metric {
        Metric {
            name,
            value: value.to_string(),
            unit: "",
            warn: String::new(),
            crit: String::new(),
            min: String::new(),
            max: String::new(),
        }
    }

    fn warn(mut self, w: impl ToString) -> Metric {
        self.warn = w.to_string();
        self
    }

    fn crit(mut self, c: impl ToString) -> Metric {
        self.crit = c.to_string();
        self
    }

    fn min(mut self, m: impl ToString) -> Metric {
        self.min = m.to_string();
        self
    }

    fn max(mut self, m: impl ToString) -> Metric {
        self.max = m.to_string();
        self
    }

    /// The plugin-format text, with trailing empty fields dropped.
    pub fn render(&self) -> String {
        self.render_labelled(self.name)
    }

    /// The same with another label, quoted when it holds a space (monitoring-plugin syntax).
    pub fn render_labelled(&self, label: &str) -> String {
        let mut fields = vec![
            format!("{}{}", self.value, self.unit),
            self.warn.clone(),
            self.crit.clone(),
            self.min.clone(),
            self.max.clone(),
        ];
        while fields.len() > 1 && fields.last().is_some_and(String::is_empty) {
            fields.pop();
        }
        let label = if label.contains(' ') {
            format!("'{label}'")
        } else {
            label.to_string()
        };
        format!("{label}={}", fields.join(";"))
    }
}

/// The metrics of one scan, in the order of the spec's table.
pub fn metrics(result: &ScanResult, thresholds: &Thresholds) -> Vec<Metric> {
    let mut out = Vec::new();
    let rating = match result.rating {
        Some(r) if r <= 5 => r.to_string(),
        _ => "U".to_string(),
    };
    out.push(
        Metric::new("rating", rating)
            .warn(format!("@0:{}", thresholds.warning))
            .crit(format!("@0:{}", thresholds.critical))
            .min(0)
            .max(5),
    );
    let time = Metric {
        unit: "s",
        ..Metric::new("time", format!("{:.3}", result.duration_seconds)).min(0)
    };
    if result.error.is_some() {
        out.push(time);
        return out;
    }
    // Any match is at least WARNING: the warning range is "more than zero".
    out.push(
        Metric::new("vulnerabilities", result.vulnerabilities.len())
            .warn(0)
            .min(0),
    );
    out.push(time);
    if result.check_hardening {
        out.push(Metric::new("hardenings_missing", result.missing_hardening().count()).min(0));
    }
    let failed = result.failed_checks().filter(|f| !f.ignored).count();
    out.push(Metric::new("extra_checks_failed", failed).min(0));
    if let Some(available) = result.update.as_ref().and_then(|u| u.update_available) {
        let mut m = Metric::new("update_available", u8::from(available))
            .min(0)
            .max(1);
        if thresholds.update_warning {
            m = m.warn(0);
        }
        out.push(m);
    }
    if let Some(days) = result.lifecycle.as_ref().and_then(|l| l.support_days_left) {
        let mut m = Metric::new("support_days_left", days);
        // A line is end of life from the first day of its support end on, when 0 days are
        // left: the critical range holds 0, so a line reported end of life is always in it.
        if let Some(window) = thresholds.eol_warning {
            m = m.warn(format!("@~:{window}")).crit("@~:0");
        }
        out.push(m);
    }
    if let Some(days) = result.tls.as_ref().and_then(|t| t.cert_days_left) {
        out.push(
            Metric::new("cert_days_left", days)
                .warn(format!("@~:{}", thresholds.tls_min_days))
                .crit("@~:-1"),
        );
    }
    if let Some(complete) = result.update.as_ref().and_then(|u| u.upgrade_path_complete) {
        out.push(
            Metric::new("upgrade_path_complete", u8::from(complete))
                .min(0)
                .max(1),
        );
    }
    if let Some(days) = result.waiver_days_left {
        let mut m = Metric::new("waiver_days_left", days.max(0)).min(0);
        if let Some(window) = thresholds.waiver_warning {
            m = m.warn(format!("@~:{window}"));
        }
        out.push(m);
    }
    if let Some(c) = &result.coverage {
        out.push(Metric::new("coverage_inconclusive", c.indeterminate + c.network_limited).min(0));
        out.push(Metric::new("coverage_not_checked", c.skipped).min(0));
    }
    out
}

/// A host name as it may stand in a perfdata label: no quotes, `=`, `|` or control characters.
pub fn label_safe(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\'' | '=' | '|' | '"' => '_',
            c if c.is_control() || c.is_whitespace() => '_',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_empty_fields_are_dropped() {
        assert_eq!(Metric::new("a", 1).render(), "a=1");
        assert_eq!(Metric::new("a", 1).min(0).render(), "a=1;;;0");
        assert_eq!(
            Metric::new("rating", 4)
                .warn("@0:3")
                .crit("@0:1")
                .min(0)
                .max(5)
                .render(),
            "rating=4;@0:3;@0:1;0;5"
        );
    }
}

//! OSV documents (osv.dev), and the CVSS 3 vectors they score with.

use super::*;

/// One entry of an OSV document's `affected`.
#[derive(Default)]
pub(super) struct OsvAffected {
    package: Obj<Package>,
    /// `ranges` when it is a list.
    ranges: Option<Vec<AffectedRange>>,
    ecosystem_specific: Option<EcosystemSpecific>,
    database_specific: Obj<SeverityOnly>,
    /// `versions`: explicit affected versions, each its own range.
    versions: Vec<AffectedRange>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct SeverityOnly {
    severity: Text,
}

members!(OsvAffected, |this, ctx, key, map| match key {
    "package" => this.package = map.next_value()?,
    "ranges" => this.ranges = read_osv_ranges(ctx, map)?.map(|(_, ranges)| ranges),
    "ecosystem_specific" => {
        this.ecosystem_specific = map
            .next_value_seed(ObjSeed::<EcosystemSpecific, _>::new(ctx))?
            .ok()
    }
    "database_specific" => this.database_specific = map.next_value()?,
    "versions" => {
        each(map, |t: Text| {
            if let Some(v) = t.get().and_then(parse_bound)
                && ctx.keep(RANGE_COST)
            {
                this.versions
                    .push(AffectedRange::new(Some(v.clone()), None, Some(v)));
            }
        })?;
    }
    _ => return Ok(false),
});

impl OsvAffected {
    /// The ranges and severity of this entry when it concerns the product.
    pub(super) fn finish(
        self,
        family: ProductFamily,
    ) -> Option<(Vec<AffectedRange>, Option<Severity>)> {
        let name = self.package.0.as_ref().and_then(|p| p.name.get());
        if !name.is_some_and(|n| package_matches(n, family)) {
            return None;
        }
        let eco_severity = self
            .ecosystem_specific
            .as_ref()
            .and_then(|e| severity(&e.severity));
        let db_severity = self
            .database_specific
            .0
            .as_ref()
            .and_then(|d| severity(&d.severity));
        // The Go database files products with non-module versions as `introduced: 0` without
        // a fix (every version!) and keeps the real ranges in `custom_ranges`.
        let custom = self
            .ecosystem_specific
            .and_then(|e| e.custom_ranges)
            .filter(|(elements, _)| *elements > 0)
            .map(|(_, ranges)| ranges);
        // Without any range list, only explicit versions are listed.
        let ranges = custom.or(self.ranges).unwrap_or(self.versions);
        Some((ranges, eco_severity.max(db_severity)))
    }
}

/// An OSV `affected[].ecosystem_specific` object.
#[derive(Default)]
pub(super) struct EcosystemSpecific {
    severity: Text,
    /// `custom_ranges` when it is a list: (its number of elements, its ranges).
    custom_ranges: Option<(usize, Vec<AffectedRange>)>,
}

members!(EcosystemSpecific, |this, ctx, key, map| match key {
    "severity" => this.severity = map.next_value()?,
    "custom_ranges" => this.custom_ranges = read_osv_ranges(ctx, map)?,
    _ => return Ok(false),
});

/// A list of OSV range objects, when the value is a list: its number of elements and the
/// ranges they describe (GIT ranges and unreadable event lists give none).
pub(super) fn read_osv_ranges<'de, A: MapAccess<'de>>(
    ctx: C,
    map: &mut A,
) -> Result<Option<(usize, Vec<AffectedRange>)>, A::Error> {
    let mut elements = 0;
    let mut ranges = Vec::new();
    let was_list = each_object(ctx, map, |range: Result<OsvRange, Shallow>| {
        elements += 1;
        if let Ok(range) = range {
            for found in range.finish() {
                if ctx.keep(RANGE_COST) {
                    ranges.push(found);
                }
            }
        }
    })?;
    Ok(was_list.then_some((elements, ranges)))
}

/// One OSV range object: its type and its events, read as they come.
#[derive(Default)]
pub(super) struct OsvRange {
    git: bool,
    /// `events` when it is a list; `None` inside when a version in it cannot be read.
    events: Option<Option<Vec<Event>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct EventFields {
    introduced: Text,
    fixed: Text,
    last_affected: Text,
}

members!(OsvRange, |this, ctx, key, map| match key {
    "type" => {
        let kind: Text = map.next_value()?;
        this.git = kind.get().is_some_and(|t| t.eq_ignore_ascii_case("GIT"));
    }
    "events" => {
        let mut events = Some(Vec::new());
        let was_list = each(map, |fields: Obj<EventFields>| {
            let (Some(list), Some(fields)) = (events.as_mut(), fields.0) else {
                return;
            };
            match Event::read(&fields) {
                Ok(Some(event)) => {
                    if ctx.keep(EVENT_COST) {
                        list.push(event);
                    }
                }
                Ok(None) => {}
                // One unreadable version spoils the whole list.
                Err(()) => events = None,
            }
        })?;
        this.events = was_list.then_some(events);
    }
    _ => return Ok(false),
});

impl OsvRange {
    pub(super) fn finish(self) -> Vec<AffectedRange> {
        match self.events {
            Some(Some(events)) if !self.git => osv_events(events),
            _ => Vec::new(),
        }
    }
}

/// One OSV event.
pub(super) enum Event {
    Introduced(Option<Version>),
    Fixed(Version),
    LastAffected(Version),
}

impl Event {
    /// `Ok(None)` for an event we do not use (`limit` only narrows git ranges), `Err` when its
    /// version cannot be read.
    pub(super) fn read(fields: &EventFields) -> Result<Option<Event>, ()> {
        Ok(Some(if let Some(s) = fields.introduced.get() {
            Event::Introduced(parse_lower(s)?)
        } else if let Some(s) = fields.fixed.get() {
            Event::Fixed(parse_bound(s).ok_or(())?)
        } else if let Some(s) = fields.last_affected.get() {
            Event::LastAffected(parse_bound(s).ok_or(())?)
        } else {
            return Ok(None);
        }))
    }
}

/// Turns an OSV event list into ranges (the caller has already skipped a list with a version
/// it cannot read: dropping one event would change what the others mean).
pub(super) fn osv_events(mut events: Vec<Event>) -> Vec<AffectedRange> {
    // OSV evaluates events in version order; "introduced 0" sorts first.
    let key = |e: &Event| -> (Option<Version>, u8) {
        match e {
            Event::Introduced(v) => (v.clone(), 1),
            Event::Fixed(v) => (Some(v.clone()), 0),
            Event::LastAffected(v) => (Some(v.clone()), 2),
        }
    };
    events.sort_by_key(key);
    let mut ranges = Vec::new();
    let mut open: Option<Option<Version>> = None;
    for event in events {
        match event {
            Event::Introduced(v) => {
                if open.is_none() {
                    open = Some(v);
                }
            }
            Event::Fixed(v) => {
                if let Some(introduced) = open.take() {
                    ranges.push(AffectedRange::new(introduced, Some(v), None));
                }
            }
            Event::LastAffected(v) => {
                if let Some(introduced) = open.take() {
                    ranges.push(AffectedRange::new(introduced, None, Some(v)));
                }
            }
        }
    }
    if let Some(introduced) = open {
        ranges.push(AffectedRange::new(introduced, None, None));
    }
    ranges
}

/// Severity band of a CVSS v3 base vector (v4 vectors and anything else: `None`), for OSV
/// documents that carry only a vector.
pub(super) fn cvss3_severity(vector: &str) -> Option<Severity> {
    let score = cvss3_base_score(vector)?;
    match score {
        s if s >= 9.0 => Some(Severity::Critical),
        s if s >= 7.0 => Some(Severity::High),
        s if s >= 4.0 => Some(Severity::Medium),
        s if s > 0.0 => Some(Severity::Low),
        _ => None,
    }
}

pub(super) fn cvss3_base_score(vector: &str) -> Option<f64> {
    let mut parts = vector.trim().split('/');
    let prefix = parts.next()?;
    if prefix != "CVSS:3.0" && prefix != "CVSS:3.1" {
        return None;
    }
    let metrics: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once(':')).collect();
    let get = |name: &str| metrics.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    // The metric's weight from the specification's table; `None` when absent or unknown.
    let weight = |name: &str, table: &[(&str, f64)]| {
        let value = get(name)?;
        table.iter().find(|(v, _)| *v == value).map(|(_, w)| *w)
    };
    let changed = match get("S")? {
        "U" => false,
        "C" => true,
        _ => return None,
    };
    let av = weight("AV", &[("N", 0.85), ("A", 0.62), ("L", 0.55), ("P", 0.2)])?;
    let ac = weight("AC", &[("L", 0.77), ("H", 0.44)])?;
    let pr = if changed {
        weight("PR", &[("N", 0.85), ("L", 0.68), ("H", 0.5)])?
    } else {
        weight("PR", &[("N", 0.85), ("L", 0.62), ("H", 0.27)])?
    };
    let ui = weight("UI", &[("N", 0.85), ("R", 0.62)])?;
    let cia = |name: &str| weight(name, &[("H", 0.56), ("L", 0.22), ("N", 0.0)]);
    let iss = 1.0 - (1.0 - cia("C")?) * (1.0 - cia("I")?) * (1.0 - cia("A")?);
    let impact = if changed {
        7.52 * (iss - 0.029) - 3.25 * (iss - 0.02_f64).powi(15)
    } else {
        6.42 * iss
    };
    if impact <= 0.0 {
        return Some(0.0);
    }
    let exploitability = 8.22 * av * ac * pr * ui;
    let raw = if changed {
        (1.08 * (impact + exploitability)).min(10.0)
    } else {
        (impact + exploitability).min(10.0)
    };
    // CVSS 3.1 "Roundup": the smallest one-decimal number >= raw, robust to float noise.
    let int = (raw * 100_000.0).round() as i64;
    Some(if int % 10_000 == 0 {
        int as f64 / 100_000.0
    } else {
        ((int / 10_000) + 1) as f64 / 10.0
    })
}

//! The native format: the advisories file we ship (`data/advisories*.json`).

use super::*;

/// The native `advisories` list, converted entry by entry. The first entry that is not an
/// object or has no `id` decides the error (the rest is still read, keeping nothing).
pub(super) fn read_native<'de, A: MapAccess<'de>>(
    ctx: C,
    map: &mut A,
) -> Result<Result<Vec<Advisory>, AdvisoryError>, A::Error> {
    let mut list = ItemList::default();
    let was_list = each_object(ctx, map, |entry: Result<NativeEntry, Shallow>| {
        list.add(|index| match entry {
                Ok(entry) => entry.finish(ctx, index),
                Err(_) => Err(format!(
                    "advisory entry {index} is not an object: give each entry `id`, `introduced` and `fixed`"
                )),
            })
    })?;
    if !was_list {
        return Ok(Err(String::from(
            "`advisories` is not a list: write `\"advisories\": [ {\"id\": ..., \"introduced\": ..., \"fixed\": ...} ]`",
        )));
    }
    Ok(list.result())
}

/// One native entry.
#[derive(Default)]
pub(super) struct NativeEntry {
    id: Text,
    enabled: Flag,
    /// `ranges` when it is a list: its usable ranges.
    ranges: Option<Vec<AffectedRange>>,
    /// The entry's own `introduced` / `fixed` / `last_affected`, used without `ranges`.
    own: RangeFields,
    aliases: Vec<String>,
    cve: Text,
    cve_id: Text,
    title: Text,
    summary: Text,
    severity: Text,
    url: Text,
}

members!(NativeEntry, |this, ctx, key, map| match key {
    "id" => this.id = map.next_value()?,
    "enabled" => this.enabled = map.next_value()?,
    "introduced" => this.own.introduced = map.next_value()?,
    "fixed" => this.own.fixed = map.next_value()?,
    "last_affected" => this.own.last_affected = map.next_value()?,
    "aliases" => this.aliases = read_strings(map, |t: Text| t)?,
    "cve" => this.cve = map.next_value()?,
    "cve_id" => this.cve_id = map.next_value()?,
    "title" => this.title = map.next_value()?,
    "summary" => this.summary = map.next_value()?,
    "severity" => this.severity = map.next_value()?,
    "url" => this.url = map.next_value()?,
    "ranges" => {
        let mut ranges = Vec::new();
        let was_list = each(map, |fields: Obj<RangeFields>| {
            if let Some(range) = fields.0.as_ref().and_then(native_range)
                && range.is_usable()
                && ctx.keep(RANGE_COST)
            {
                ranges.push(range);
            }
        })?;
        this.ranges = was_list.then_some(ranges);
    }
    _ => return Ok(false),
});

impl NativeEntry {
    pub(super) fn finish(self, ctx: C, index: usize) -> Result<Option<Advisory>, AdvisoryError> {
        let Some(id) = self.id.get() else {
            return Err(format!(
                "advisory entry {index} has no `id`: give every entry a string `id`"
            ));
        };
        if self.enabled.0 == Some(false) {
            return Ok(None);
        }
        let ranges = match self.ranges {
            Some(list) => list,
            None => native_range(&self.own)
                .into_iter()
                .filter(AffectedRange::is_usable)
                .collect(),
        };
        if ranges.is_empty() {
            return Ok(None);
        }
        let cves = [&self.cve, &self.cve_id].into_iter().filter_map(Text::get);
        let aliases = aliases_of(id, self.aliases.iter().map(String::as_str).chain(cves));
        let advisory = Advisory {
            id: id.to_string(),
            aliases,
            summary: self
                .title
                .get()
                .or_else(|| self.summary.get())
                .unwrap_or(id)
                .to_string(),
            severity: severity(&self.severity),
            url: self.url.get().map(str::to_string),
            ranges,
        };
        Ok(ctx.keep_advisory(advisory))
    }
}

/// The members of a native `{introduced, fixed, last_affected}` object.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub(super) struct RangeFields {
    introduced: Shallow,
    fixed: Shallow,
    last_affected: Shallow,
}

/// A native range; `None` when a member is not a version string. An object that names none
/// of the three members is open on both sides, which [`AffectedRange::is_usable`] refuses
/// (rather than reading it as "every version").
pub(super) fn native_range(fields: &RangeFields) -> Option<AffectedRange> {
    // A member as text: empty when absent or `null`, `None` (spoiling the range) for another
    // JSON type.
    let text = |member: &Shallow| match member {
        Shallow::Null => Some(String::new()),
        Shallow::Text(text) => Text::new(text).0,
        _ => None,
    };
    let upper = |member: &Shallow| match text(member)?.trim() {
        "" => Some(None),
        text => parse_bound(text).map(Some),
    };
    Some(AffectedRange::new(
        parse_lower(&text(&fields.introduced)?).ok()?,
        upper(&fields.fixed)?,
        upper(&fields.last_affected)?,
    ))
}

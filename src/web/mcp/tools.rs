//! The tools: what `tools/list` says of each, and the calls that answer them.

use super::progress::Progress;
use super::schemas::*;
use super::*;

/// A tool: what `tools/list` says of it, and the function that answers its calls.
pub(super) struct Tool {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// The schema of its arguments: its typed request's (`input::<T>`).
    input: fn() -> Value,
    /// The schema of its structured content: its answer type's.
    output: fn() -> Value,
    /// The `annotations` hints that hold (each true).
    hints: &'static [&'static str],
    call: fn(Call) -> Result<Value, Failure>,
}

/// One `tools/call`: the API, the HTTP request it came in (the limits count against its
/// address), the checked arguments, and where progress goes.
pub(super) struct Call<'a, 'p> {
    api: &'a Api,
    request: &'a Request,
    arguments: Arguments,
    progress: &'a mut Progress<'p>,
}

pub(super) const READ_ONLY: &[&str] = &["readOnlyHint"];

/// The tools, in the order `tools/list` names them.
pub(super) const TOOLS: [Tool; 6] = [
    Tool {
        name: "scan_instance",
        title: "Scan a storage instance",
        description: "Scans one OpenCloud / oCIS instance from the outside (version and end of \
            life, known vulnerabilities, TLS, security headers, exposed files, demo accounts) \
            and answers its graded result. Waits for the scan (usually seconds; at most the operator's time budget and the queue, \
            then it answers the uuid for get_scan_result); \
            a target may be scanned once per cooldown period. The answer carries the \
            scan's erase_key, which erase_instance_data needs; nothing else answers it.",
        input: input::<ScanRequest>,
        output: SubmittedScan::schema,
        hints: &[],
        call: scan_instance,
    },
    Tool {
        name: "scan_instances",
        title: "Scan several storage instances",
        description: "Scans up to 10 OpenCloud / oCIS instances in parallel (within the \
            operator's limits: each target counts as one submission and has its own \
            cooldown) and answers one entry per target: its uuid, status, grade and state, or \
            why it was refused (a malformed target too, in its place). A target named twice \
            (the same host and port, however written) is scanned once: both entries answer \
            with that scan; two names of one address share its cooldown. Waits \
            at most the operator's time budget; a target not completed by then is answered \
            with its uuid for get_scan_result. Each submitted entry carries its scan's \
            erase_key, which erase_instance_data needs.",
        input: input::<ScanTargets>,
        output: TargetEntries::schema,
        hints: &[],
        call: scan_instances,
    },
    Tool {
        name: "get_scan_result",
        title: "Get a scan's result",
        description: "The state of a scan by uuid, and its result document once completed.",
        input: input::<ScanRef>,
        output: ScanState::schema,
        hints: READ_ONLY,
        call: get_scan_result,
    },
    Tool {
        name: "plan_remediation",
        title: "Remediation plan",
        description: "The remediation plan of a completed scan: ordered steps, and the \
            findings grouped by the system that fixes them (web server, instance, DNS, ...).",
        input: input::<ScanRef>,
        output: PlanAnswer::schema,
        hints: READ_ONLY,
        call: plan_remediation,
    },
    Tool {
        name: "export_scan",
        title: "Export a scan",
        description: "A completed scan as json, csv or sarif (text) or pdf (a base64 embedded \
            resource).",
        input: input::<ExportRequest>,
        output: ExportAnswer::schema,
        hints: READ_ONLY,
        call: export_scan,
    },
    Tool {
        name: "erase_instance_data",
        title: "Erase a scan's data",
        description: "Erases the stored scan of the uuid (its record and result), given \
            the erase key its submission (scan_instance, scan_instances) answered: only its \
            submitter may erase it, and never another submitter's scan of the same instance.",
        input: input::<EraseRequest>,
        output: Erased::schema,
        hints: &["destructiveHint", "idempotentHint"],
        call: erase_instance_data,
    },
];

/// The tools as `tools/list` answers them, each with its input and output schema.
pub fn tools() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|tool| {
            let mut listed = json!({
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": (tool.input)(),
                "outputSchema": (tool.output)(),
            });
            for hint in tool.hints {
                listed["annotations"][*hint] = json!(true);
            }
            listed
        })
        .collect()
}

/// A call's arguments, checked against its tool's input schema, with the tool's name.
pub(super) struct Arguments {
    pub(super) tool: &'static str,
    pub(super) members: Map<String, Value>,
}

impl Arguments {
    /// The arguments of `params` for `tool`, checked against its input schema's property names
    /// and required list (the values' types are checked by [`Arguments::read`]).
    fn of(tool: &Tool, params: &Value) -> Result<Arguments, Failure> {
        let name = tool.name;
        let members = match params.get("arguments").unwrap_or(&Value::Null) {
            Value::Null => Map::new(),
            Value::Object(m) => m.clone(),
            _ => return Err(invalid_params("arguments must be an object")),
        };
        let schema = (tool.input)();
        let known: Vec<&str> = schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if let Some(unknown) = members.keys().find(|k| !known.contains(&k.as_str())) {
            let shown: String = unknown.chars().take(40).collect();
            let takes = known.join(", ");
            let message = format!("{name}: unknown argument {shown:?}; it takes {takes}");
            return Err(invalid_params(message));
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().unwrap_or_default();
            if !members.contains_key(required) {
                let message = format!("{name}: argument {required} is required");
                return Err(invalid_params(message));
            }
        }
        Ok(Arguments {
            tool: name,
            members,
        })
    }

    /// The arguments as the tool's typed request (its input schema is that type's).
    pub(super) fn read<T: serde::de::DeserializeOwned>(self) -> Result<T, Failure> {
        serde_json::from_value(Value::Object(self.members))
            .map_err(|e| invalid_params(format!("{}: {e}", self.tool)))
    }
}

/// A string argument with something in it, trimmed.
pub(super) fn filled<'a>(value: &'a str, name: &str) -> Result<&'a str, Failure> {
    match value.trim() {
        "" => Err(invalid_params(format!("{name} must be a non-empty string"))),
        trimmed => Ok(trimmed),
    }
}

/// A tool's answer: structured content and its text summary.
pub(super) fn tool_result(structured: Value, summary: String) -> Value {
    json!({
        "content": [{"type": "text", "text": summary}],
        "structuredContent": structured,
        "isError": false,
    })
}

/// A refusal of the API in words, with when to retry.
pub(super) fn refusal_text(Refused { error, retry_after }: &Refused) -> String {
    let (status, code, message) = (error.status, error.code, &error.message);
    let mut text = format!("refused ({status} {code}): {message}");
    match retry_after {
        Some(secs) => text.push_str(&format!("; retry after {secs} seconds")),
        None if status == 404 => {
            text.push_str("; do not retry this uuid: scan the instance again with scan_instance")
        }
        None => text.push_str("; do not retry unchanged"),
    }
    text
}

/// What a tool answers of a scan it waited for and no longer finds.
pub(super) const LOST: &str = "the scan was lost; scan again";
/// What a tool answers of a completed scan whose result this version cannot read.
pub(super) const UNREADABLE: &str = "the completed scan has no readable result; scan again";

pub(super) fn call_tool(
    api: &Api,
    request: &Request,
    params: &Value,
    progress: &mut Progress,
) -> Result<Value, Failure> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("tools/call needs params.name"))?;
    let tool = TOOLS
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| invalid_params(format!("unknown tool: {name}")))?;
    let arguments = Arguments::of(tool, params)?;
    (tool.call)(Call {
        api,
        request,
        arguments,
        progress,
    })
}

pub(super) fn get_scan_result(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let ScanRef { uuid } = arguments.read()?;
    let uuid = filled(&uuid, "uuid")?;
    let record = api.record(uuid)?;
    let (state, summary) = scan_state(uuid, record.status, record.result.as_deref())?;
    Ok(tool_result(json!(state), summary))
}

pub(super) fn plan_remediation(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let ScanRef { uuid } = arguments.read()?;
    let uuid = filled(&uuid, "uuid")?;
    Ok(plan(uuid, &completed(api, uuid)?.document))
}

pub(super) fn export_scan(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let ExportRequest { uuid, format } = arguments.read()?;
    let (uuid, format) = (filled(&uuid, "uuid")?, filled(&format, "format")?);
    if !EXPORT_FORMATS.contains(&format) {
        let message = format!("format must be one of {}", EXPORT_FORMATS.join(", "));
        return Err(invalid_params(message));
    }
    Ok(export(api, uuid, format, &completed(api, uuid)?))
}

pub(super) fn erase_instance_data(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let EraseRequest { uuid, erase_key } = arguments.read()?;
    let uuid = filled(&uuid, "uuid")?;
    let erase_key = filled(&erase_key, "erase_key")?;
    api.erase_with_key(uuid, Some(erase_key))?;
    let summary = format!("erased scan {uuid} and its result; the uuid is gone");
    Ok(tool_result(json!(Erased { erased: 1 }), summary))
}

pub(super) fn scan_instance(call: Call) -> Result<Value, Failure> {
    let (api, request) = (call.api, call.request);
    // The submission as the JSON API reads it, so the same checks apply.
    let body = serde_json::to_vec(&call.arguments.members).unwrap_or_default();
    let (scan, target) = parse_submission(&body).map_err(|e| invalid_params(e.message))?;
    let queued = api.enqueue(scan, &target, request)?;
    let waited = wait_for(api, request, &[(queued.uuid.clone(), None)], call.progress).pop();
    let record = waited.ok_or_else(|| Failure::Tool(LOST.into()))??;
    let (state, summary) = scan_state(&queued.uuid, record.status, record.result.as_deref())?;
    // The erase key in the structured content and in words: the caller alone learns it.
    let submitted = SubmittedScan {
        uuid: state.uuid,
        status: state.status,
        result: state.result,
        erase_key: queued.erase_key.clone(),
    };
    let summary = format!(
        "{summary}\nErase key of this scan (keep it; erase_instance_data takes it): {}",
        queued.erase_key
    );
    Ok(tool_result(json!(submitted), summary))
}

/// How far a scan is, for progress: its place in a scan's life (queued 1, running 2,
/// completed 3).
pub(super) fn stage(status: Status) -> u64 {
    let place = statuses().into_iter().position(|s| s == status);
    place.map_or(0, |index| index as u64 + 1)
}

/// Waits until every scan of `uuids` (each with the target to name in progress messages) is
/// completed, or at most the operator's time budget and the queue (ApiConfig::scan_wait);
/// then answers each scan's record as it is (the caller answers an unfinished one's uuid, for
/// get_scan_result). Progress is the sum of the scans' stages, out of 3 per scan; each change
/// of a scan's state is one notification.
///
/// A waiting call holds an HTTP worker, so it waits only with a seat of `Api::waits` (a
/// bounded share of the workers, a few per client): without one, the records are read once
/// and answered as they are, so a flood of calls on never-ending scans leaves the other
/// workers to everyone else.
pub(super) fn wait_for(
    api: &Api,
    request: &Request,
    uuids: &[(String, Option<&str>)],
    progress: &mut Progress,
) -> Vec<Result<ScanRecord, Refused>> {
    let client = limits::address_key(limits::client_of(request, &api.config.trusted_proxies));
    let seat = api.waits.take(&client);
    let total = 3 * uuids.len() as u64;
    let message = |target: Option<&str>, status: Status| match target {
        Some(target) => format!("{target}: {}", status.as_str()),
        None => status.as_str().to_string(),
    };
    // Every scan was queued when it was inserted.
    let mut seen = vec![Status::Queued; uuids.len()];
    let mut done = 0;
    for (_, target) in uuids {
        done += stage(Status::Queued);
        progress.note(done, total, message(*target, Status::Queued));
    }
    let until = Instant::now()
        + seat
            .as_ref()
            .map_or(Duration::ZERO, |_| api.config.scan_wait);
    let mut answers: Vec<Option<Result<ScanRecord, Refused>>> =
        uuids.iter().map(|_| None).collect();
    let settled = |answer: &Option<Result<ScanRecord, Refused>>| match answer {
        Some(Ok(record)) => record.status == Status::Completed,
        Some(Err(_)) => true,
        None => false,
    };
    loop {
        for (i, (uuid, target)) in uuids.iter().enumerate() {
            if settled(&answers[i]) {
                continue;
            }
            // Each poll has a store deadline of its own: the wait is longer than one.
            let record =
                crate::web::store::sharing_deadline(api.config.store_timeout, || api.record(uuid));
            if let Ok(record) = &record
                && record.status != seen[i]
            {
                done += stage(record.status).saturating_sub(stage(seen[i]));
                seen[i] = record.status;
                progress.note(done, total, message(*target, record.status));
            }
            answers[i] = Some(record);
        }
        if answers.iter().all(settled) || Instant::now() >= until || progress.gone {
            break;
        }
        progress.heartbeat();
        std::thread::sleep(SCAN_POLL);
    }
    // The loop ran once at least: every scan was polled.
    answers.into_iter().flatten().collect()
}

/// `scan_instances`: each target submitted as `scan_instance` submits it (guard, limits and
/// cooldown per target, counted against the caller), then all waited for together. A target
/// that is refused (malformed, guarded, limited) is an entry with `error`, in place; the call is
/// a tool error only when every target was refused. A target naming the same instance as an
/// earlier one (a cooldown key by name in common: host and a port its scan connects to, the
/// scheme and path aside, `limits::instance_names`) is not submitted again: its
/// entry answers with the earlier entry's scan and names it in `same_as`. Arguments that are
/// no call at all (no list of 1 to 10 targets, a malformed `waive` or `release_track`) are a
/// JSON-RPC error, before anything is submitted.
pub(super) fn scan_instances(call: Call) -> Result<Value, Failure> {
    let (api, request) = (call.api, call.request);
    let asked: ScanTargets = call.arguments.read()?;
    let items = match &asked.target_urls {
        Value::Array(items) if (1..=MAX_TARGETS).contains(&items.len()) => items,
        _ => {
            return Err(invalid_params(format!(
                "target_urls must be an array of 1 to {MAX_TARGETS} instance addresses"
            )));
        }
    };
    // Each entry names its target as the caller gave it (anything but a string as its JSON).
    let targets: Vec<String> = items
        .iter()
        .map(|item| {
            item.as_str()
                .map_or_else(|| item.to_string(), str::to_string)
        })
        .collect();
    // Each target read as scan_instance reads it: a refusal that names target_url is that
    // target's, one that names another argument (checked before the target) the whole call's.
    let mut parsed = Vec::with_capacity(items.len());
    for item in items {
        let one =
            json!({"target_url": item, "waive": asked.waive, "release_track": asked.release_track});
        let body = serde_json::to_vec(&one).unwrap_or_default();
        parsed.push(match parse_submission(&body) {
            Ok(submission) => Ok(submission),
            Err(e) if e.field == Some("target_url") => Err(Refused::from(e)),
            Err(e) => return Err(invalid_params(e.message)),
        });
    }
    // The earlier entry naming the same instance (sharing a cooldown key by name: host and a
    // port its scan connects to), if any.
    let keys: Vec<Vec<String>> = parsed
        .iter()
        .map(|p| {
            p.as_ref()
                .map(|(_, target)| limits::instance_names(target, api.config.target_port))
                .unwrap_or_default()
        })
        .collect();
    let same_as: Vec<Option<usize>> = keys
        .iter()
        .enumerate()
        .map(|(i, names)| {
            keys[..i]
                .iter()
                .position(|earlier| earlier.iter().any(|name| names.contains(name)))
        })
        .collect();
    // Submitted one after the other, so the limits count each; refusals kept in place.
    let mut submitted: Vec<Result<Queued, Refused>> = Vec::with_capacity(parsed.len());
    for (i, submission) in parsed.into_iter().enumerate() {
        submitted.push(match (same_as[i], submission) {
            (Some(first), _) => submitted[first].clone(),
            (None, Ok((scan, target))) => api.enqueue(scan, &target, request),
            (None, Err(refused)) => Err(refused),
        });
    }
    let scans: Vec<(String, Option<&str>)> = submitted
        .iter()
        .zip(&targets)
        .zip(&same_as)
        .filter_map(|((submission, target), same)| match (submission, same) {
            (Ok(queued), None) => Some((queued.uuid.clone(), Some(target.as_str()))),
            _ => None,
        })
        .collect();
    let waited: HashMap<String, Result<ScanRecord, Refused>> = scans
        .iter()
        .map(|(uuid, _)| uuid.clone())
        .zip(wait_for(api, request, &scans, call.progress))
        .collect();
    let mut results = Vec::with_capacity(targets.len());
    let mut lines = Vec::with_capacity(targets.len());
    for (i, (target_url, submission)) in targets.iter().zip(&submitted).enumerate() {
        let (mut entry, mut line) = match submission {
            Ok(queued) => scanned_entry(target_url, queued, waited.get(&queued.uuid)),
            Err(refused) => refused_entry(target_url, refused),
        };
        entry.same_as = same_as[i];
        if let Some(first) = same_as[i] {
            line = format!("{line} (the same instance as {}: one scan)", targets[first]);
        }
        lines.push(line);
        results.push(entry);
    }
    let (structured, lines) = (json!(TargetEntries { results }), lines.join("\n"));
    if scans.is_empty() {
        let mut refused = tool_result(structured, format!("every target was refused:\n{lines}"));
        refused["isError"] = json!(true);
        return Ok(refused);
    }
    let answered = submitted.iter().filter(|s| s.is_ok()).count();
    let (count, scanned) = (targets.len(), scans.len());
    let summary = format!("{answered} of {count} target(s) scanned ({scanned} scan(s)):\n{lines}");
    Ok(tool_result(structured, summary))
}

/// A `scan_instances` entry of a refused target, and its line of the summary.
pub(super) fn refused_entry(target_url: &str, refused: &Refused) -> (TargetEntry, String) {
    let error = refusal_text(refused);
    let line = format!("{target_url}: {error}");
    let entry = TargetEntry {
        target_url: target_url.to_string(),
        status: "refused",
        error: Some(error),
        retry_after: refused.retry_after,
        ..TargetEntry::default()
    };
    (entry, line)
}

/// A `scan_instances` entry of a submitted target as its scan stands after the wait, and its
/// line of the summary.
pub(super) fn scanned_entry(
    target_url: &str,
    queued: &Queued,
    waited: Option<&Result<ScanRecord, Refused>>,
) -> (TargetEntry, String) {
    let uuid = &queued.uuid;
    let mut entry = TargetEntry {
        target_url: target_url.to_string(),
        uuid: Some(uuid.clone()),
        status: "error",
        erase_key: Some(queued.erase_key.clone()),
        ..TargetEntry::default()
    };
    let failed = |entry: TargetEntry, error: String| {
        let line = format!("{target_url}: {error}");
        let error = Some(error);
        (TargetEntry { error, ..entry }, line)
    };
    let record = match waited {
        Some(Ok(record)) => record,
        Some(Err(refused)) => return failed(entry, refusal_text(refused)),
        None => return failed(entry, LOST.into()),
    };
    if record.status != Status::Completed {
        entry.status = record.status.as_str();
        let line = format!("{target_url}: {}", pending(uuid, record.status));
        return (entry, line);
    }
    let Some(Completed { document, .. }) = Completed::parse(record.result.as_deref()) else {
        entry.error = Some(UNREADABLE.into());
        let line = format!("{target_url}: scan {uuid} has no readable result");
        return (entry, line);
    };
    entry.status = record.status.as_str();
    entry.grade = Some(document.grade.clone());
    entry.state = Some(document.state);
    entry.submitter_grade = document.submitter_waivers.as_ref().map(|s| s.grade.clone());
    let line = format!(
        "{target_url}: scan {uuid}, grade {}, state {}{}",
        document.grade,
        document.state.label(),
        submitter_note(&document),
    );
    (entry, line)
}

/// The scan as it stands and its summary, or the tool error of a result that cannot be read.
pub(super) fn scan_state(
    uuid: &str,
    status: Status,
    result: Option<&str>,
) -> Result<(ScanState, String), Failure> {
    let state = |result| ScanState {
        uuid: uuid.to_string(),
        status: status.as_str(),
        result,
    };
    if status != Status::Completed {
        return Ok((state(Value::Null), pending(uuid, status)));
    }
    let done = Completed::parse(result).ok_or_else(|| Failure::Tool(UNREADABLE.into()))?;
    Ok((state(json!(done.document)), summary(uuid, &done.document)))
}

/// What a tool says of a scan that has not completed yet.
pub(super) fn pending(uuid: &str, status: Status) -> String {
    let status = status.as_str();
    format!("scan {uuid} is {status}; call get_scan_result with this uuid again in a few seconds")
}

pub(super) fn summary(uuid: &str, document: &ScanResult) -> String {
    let failed = document
        .findings
        .iter()
        .filter(|f| f.status == FindingStatus::Failed && !f.ignored)
        .count();
    format!(
        "scan {uuid} of {}: grade {}, state {}, {failed} failed check(s), {} remediation \
         step(s){}. {}",
        document.host,
        document.grade,
        document.state.label(),
        document.remediation_plan.steps.len(),
        submitter_note(document),
        document.message,
    )
}

/// "; with the submitter's waivers (...): grade A+, state OK" after a headline, or nothing:
/// the headline is always without them.
pub(super) fn submitter_note(document: &ScanResult) -> String {
    document
        .submitter_waivers
        .as_ref()
        .map(|s| format!("; {}", s.summary()))
        .unwrap_or_default()
}

/// The completed scan of `uuid`, or the tool error to answer instead.
pub(super) fn completed(api: &Api, uuid: &str) -> Result<Completed, Failure> {
    let record = api.record(uuid)?;
    if record.status != Status::Completed {
        let message = format!("the scan is {}", record.status.as_str());
        return Err(ApiError::new(409, "not_completed", message)
            .retry_after(2)
            .into());
    }
    Completed::parse(record.result.as_deref()).ok_or_else(|| Failure::Tool(UNREADABLE.into()))
}

pub(super) fn plan(uuid: &str, document: &ScanResult) -> Value {
    let plan = &document.remediation_plan;
    let (host, grade) = (&document.host, &document.grade);
    let mut text = format!("remediation plan for {host} (grade {grade}):");
    if plan.steps.is_empty() {
        text.push_str(" nothing to do.");
    }
    for (i, step) in plan.steps.iter().enumerate() {
        text.push_str(&format!("\n{}. [{}] {}", i + 1, step.fixed_in, step.action));
    }
    for line in &plan.group_summary {
        text.push_str(&format!("\n{line}"));
    }
    let answer = PlanAnswer {
        uuid: uuid.to_string(),
        host: host.clone(),
        grade: grade.clone(),
        remediation_plan: plan.clone(),
    };
    tool_result(json!(answer), text)
}

pub(super) fn export(api: &Api, uuid: &str, format: &str, done: &Completed) -> Value {
    let exported = crate::web::export::file(done, uuid, format);
    let (filename, body) = (&exported.filename, &exported.body);
    let structured = json!(ExportAnswer {
        uuid: uuid.to_string(),
        format: format.to_string(),
        mime_type: exported.media,
        filename: filename.clone(),
        bytes: body.len(),
    });
    let base = api.config.base_url.trim_end_matches('/');
    let uri = format!("{base}/api/scans/{uuid}/export/{format}");
    let content = if format == "pdf" {
        json!([
            {"type": "text", "text": format!("{filename}: the PDF report ({} bytes), embedded \
                as a base64 resource; also at {uri}", body.len())},
            {"type": "resource", "resource": {
                "uri": uri,
                "mimeType": exported.media,
                "blob": crate::text::base64(body),
            }},
        ])
    } else {
        json!([{"type": "text", "text": String::from_utf8_lossy(body)}])
    };
    json!({"content": content, "structuredContent": structured, "isError": false})
}

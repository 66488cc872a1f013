//! The prompts: what `prompts/list` says of each, and their messages.

use super::*;

/// A prompt: what `prompts/list` says of it, and its message for a target.
pub(super) struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// What its message for a target is, before the target: "Audit of".
    about: &'static str,
    /// The text of its message for `target`.
    message: fn(&str) -> String,
}

pub(super) const PROMPTS: [Prompt; 2] = [
    Prompt {
        name: "audit_instance",
        title: "Audit a storage instance",
        description: "Scan an instance and write a remediation plan for its operators.",
        about: "Audit of",
        message: |target| {
            format!(
                "Audit the storage instance at {target}. Call the scan_instance tool with \
                 target_url \"{target}\", then call plan_remediation with the uuid it answers. \
                 Report the grade and the state, explain each failed finding in plain words, \
                 and write a remediation plan for the operators: ordered steps, grouped by the \
                 system that fixes them (web server or proxy, the instance's configuration, \
                 DNS, certificates), most severe first."
            )
        },
    },
    Prompt {
        name: "review_transport_security",
        title: "Review transport security",
        description: "Review only an instance's certificate and TLS handshake.",
        about: "Transport security review of",
        message: |target| {
            format!(
                "Review only the transport security of the storage instance at {target}: call \
                 the scan_instance tool with target_url \"{target}\" and look only at the \
                 certificate (trust, issuer, expiry, names) and the TLS handshake (protocol \
                 versions, HSTS, fallback to plain HTTP). Leave the other findings aside. Say \
                 what is sound, what is not, and how to fix it."
            )
        },
    },
];

/// The prompts, each with its one argument.
pub fn prompts() -> Vec<Value> {
    let target = json!([{
        "name": "target_url",
        "description": "the instance's hostname, address or URL, e.g. cloud.example.com",
        "required": true,
    }]);
    PROMPTS
        .iter()
        .map(|p| {
            json!({"name": p.name, "title": p.title, "description": p.description,
                   "arguments": target})
        })
        .collect()
}

pub(super) fn get_prompt(params: &Value) -> Result<Value, Failure> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("prompts/get needs params.name"))?;
    let prompt = PROMPTS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| invalid_params(format!("unknown prompt: {name}")))?;
    let target = params
        .get("arguments")
        .and_then(|a| a.get("target_url"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid_params(format!("{name} needs the argument target_url")))?;
    if target.chars().count() > MAX_TARGET_CHARS || target.chars().any(char::is_control) {
        return Err(invalid_params("target_url is no instance address"));
    }
    let text = (prompt.message)(target);
    Ok(json!({
        "description": format!("{} {target}", prompt.about),
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}

//! `--format otlp`: one OTLP/JSON `ExportMetricsServiceRequest` for all hosts, ready to POST
//! to a collector's `/v1/metrics` (the JSON mapping of opentelemetry-proto: lowerCamelCase
//! field names, 64-bit integers and nanosecond time stamps as strings).
//!
//! One `resourceMetrics` entry per host, its resource naming the service, the host and (when
//! the scan recognised it) product and version; the metrics and their attributes are those of
//! `--format metrics`, each a gauge with one data point at the run's clock. A failed scan is
//! `storage_security_scrape_success` 0 and the scan duration, as there.

use super::Context;
use super::metrics::{self, Sample};
use crate::report::ScanResult;
use serde_json::{Value, json};

const SERVICE: &str = "check-storage-security";

fn attribute(key: &str, value: &str) -> Value {
    json!({ "key": key, "value": { "stringValue": value } })
}

/// A gauge data point: integers as `asInt` (a string, int64 in proto3 JSON), others as
/// `asDouble`.
fn data_point(result: &ScanResult, sample: &Sample, time: &str) -> Value {
    let attributes: Vec<Value> = metrics::labels(result, sample.family)
        .iter()
        .map(|(key, value)| attribute(key, value))
        .collect();
    let mut point = json!({ "attributes": attributes, "timeUnixNano": time });
    match sample.value.parse::<i64>() {
        Ok(n) => point["asInt"] = json!(n.to_string()),
        // A value that is no finite number would be `null` (samples are finite numbers).
        Err(_) => point["asDouble"] = json!(sample.value.parse::<f64>().unwrap_or(f64::NAN)),
    }
    point
}

fn resource_metrics(result: &ScanResult, ctx: &Context, time: &str) -> Value {
    let mut attributes = vec![
        attribute("service.name", SERVICE),
        attribute("host.name", &result.host),
    ];
    if let Some(p) = &result.product {
        attributes.push(attribute("product", &p.name));
        attributes.push(attribute("version", &p.version));
    }
    let metrics: Vec<Value> = metrics::host_samples(result, ctx)
        .iter()
        .map(|sample| {
            json!({
                "name": sample.family.name,
                "description": sample.family.help,
                "unit": sample.family.unit,
                "gauge": { "dataPoints": [data_point(result, sample, time)] },
            })
        })
        .collect();
    json!({
        "resource": { "attributes": attributes },
        "scopeMetrics": [{
            "scope": { "name": SERVICE },
            "metrics": metrics,
        }],
    })
}

pub fn render(results: &[ScanResult], ctx: &Context) -> String {
    let time = ctx.now.0.as_nanosecond().to_string();
    let request = json!({
        "resourceMetrics": metrics::distinct_hosts(results)
            .into_iter()
            .map(|r| resource_metrics(r, ctx, &time))
            .collect::<Vec<_>>(),
    });
    // `{:#}`: serde_json's pretty print of a `Value` (which cannot fail).
    format!("{request:#}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::testing::{failed, now, scanned, settings};

    #[test]
    fn one_resource_per_host_with_string_time_and_int64() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let out = render(
            &[scanned("a.example:8443", "8.1.0", Some(-3)), failed("b")],
            &ctx,
        );
        let doc: Value = serde_json::from_str(&out).unwrap();
        let resources = doc["resourceMetrics"].as_array().unwrap();
        assert_eq!(resources.len(), 2);
        let metrics = resources[0]["scopeMetrics"][0]["metrics"]
            .as_array()
            .unwrap();
        let rating = &metrics[0];
        assert_eq!(rating["name"], "storage_security_rating_score");
        let point = &rating["gauge"]["dataPoints"][0];
        assert_eq!(point["asInt"], "5");
        assert_eq!(point["timeUnixNano"], "1795316400000000000");
        assert_eq!(point["attributes"][1]["key"], "domain");
        assert_eq!(point["attributes"][1]["value"]["stringValue"], "a.example");
        let days = metrics
            .iter()
            .find(|m| m["name"] == "storage_security_support_days_remaining")
            .unwrap();
        assert_eq!(days["gauge"]["dataPoints"][0]["asInt"], "-3");
        let duration = metrics
            .iter()
            .find(|m| m["name"] == "storage_security_scan_duration_seconds")
            .unwrap();
        assert_eq!(duration["gauge"]["dataPoints"][0]["asDouble"], 1.25);
        let failed: Vec<&str> = resources[1]["scopeMetrics"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            failed,
            [
                "storage_security_scan_duration_seconds",
                "storage_security_scrape_success"
            ]
        );
        assert_eq!(
            resources[1]["resource"]["attributes"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }
}

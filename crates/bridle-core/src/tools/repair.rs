//! Repair of the common slips models make in tool arguments, before validation.
//!
//! Repaired: two JSON objects glued together, arguments sent as a JSON string, `"true"`/`"42"`
//! where the schema wants a boolean or a number, and known argument aliases. Every repair is
//! named in `notes` so the model learns what was changed; nothing is guessed beyond that.

use serde_json::{Map, Value};

/// Aliases models use, and the canonical name each stands for.
const ALIASES: &[(&str, &str)] = &[
    ("old_string", "old_text"),
    ("new_string", "new_text"),
    ("source_text", "old_text"),
    ("target_text", "new_text"),
    ("file_path", "path"),
];

/// Arguments after repair.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    /// The arguments object.
    pub value: Value,
    /// What was repaired, in words for the model; empty when nothing was.
    pub notes: Vec<String>,
}

/// Arguments that are not JSON even after repair.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("arguments are not valid JSON: {0}")]
pub struct RepairError(pub String);

/// Parses and repairs raw argument text against the tool's schema.
pub fn repair_arguments(raw: &str, schema: &Value) -> Result<Repaired, RepairError> {
    let mut notes = Vec::new();
    let trimmed = raw.trim();
    let mut value = if trimmed.is_empty() { Value::Object(Map::new()) } else { parse_lenient(trimmed, &mut notes)? };
    if let Value::String(inner) = &value {
        if let Ok(decoded @ Value::Object(_)) = serde_json::from_str::<Value>(inner) {
            notes.push("the arguments were a JSON string holding an object; decoded it".into());
            value = decoded;
        }
    }
    repair_value(&mut value, schema, "", &mut notes);
    Ok(Repaired { value, notes })
}

/// One JSON value, or several objects glued together (merged, earlier keys winning).
fn parse_lenient(text: &str, notes: &mut Vec<String>) -> Result<Value, RepairError> {
    let first_error = match serde_json::from_str::<Value>(text) {
        Ok(value) => return Ok(value),
        Err(e) => e.to_string(),
    };
    let mut values = Vec::new();
    for item in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        match item {
            Ok(value) => values.push(value),
            Err(_) => return Err(RepairError(first_error)),
        }
    }
    if values.len() < 2 || !values.iter().all(Value::is_object) {
        return Err(RepairError(first_error));
    }
    let count = values.len();
    let mut merged = Map::new();
    for value in values {
        if let Value::Object(map) = value {
            for (k, v) in map {
                merged.entry(k).or_insert(v);
            }
        }
    }
    notes.push(format!("{count} JSON objects were glued together; merged them (earlier keys win)"));
    Ok(Value::Object(merged))
}

/// Renames aliases and coerces scalar strings, guided by the schema, recursing into
/// nested objects and arrays.
fn repair_value(value: &mut Value, schema: &Value, at: &str, notes: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
            for (alias, canonical) in ALIASES {
                if props.contains_key(*canonical) && !props.contains_key(*alias) && !map.contains_key(*canonical) {
                    if let Some(v) = map.remove(*alias) {
                        map.insert((*canonical).to_string(), v);
                        notes.push(format!("renamed `{at}{alias}` to `{at}{canonical}`"));
                    }
                }
            }
            for (key, v) in map.iter_mut() {
                if let Some(prop_schema) = props.get(key) {
                    repair_value(v, prop_schema, &format!("{at}{key}."), notes);
                    coerce_scalar(v, prop_schema, &format!("{at}{key}"), notes);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    let prefix = format!("{}[{i}].", at.trim_end_matches('.'));
                    repair_value(item, item_schema, &prefix, notes);
                }
            }
        }
        _ => {}
    }
}

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn coerce_scalar(value: &mut Value, schema: &Value, at: &str, notes: &mut Vec<String>) {
    let Value::String(s) = value else { return };
    let types = schema_types(schema);
    if types.contains(&"string") {
        return;
    }
    let text = s.trim();
    let replacement = if types.contains(&"boolean") {
        match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        }
    } else if types.contains(&"integer") {
        text.parse::<i64>().ok().map(Value::from)
    } else if types.contains(&"number") {
        text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
    } else {
        None
    };
    if let Some(replacement) = replacement {
        notes.push(format!("`{at}` was the string {value}; used {replacement}"));
        *value = replacement;
    }
}

/// JSON text with object keys sorted at every level: equal arguments give equal text.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // Serialising a Value cannot fail (keys are strings, no non-finite floats exist in it).
    serde_json::to_string(&sorted(value)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_text": {"type": "string"},
                "replace_all": {"type": ["boolean", "null"]},
                "line_hint": {"type": ["integer", "null"]},
                "ratio": {"type": "number"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {
                    "old_text": {"type": "string"}, "replace_all": {"type": "boolean"}
                }}}
            }
        })
    }

    #[test]
    fn valid_json_is_untouched() {
        let r = repair_arguments(r#"{"path":"a.txt"}"#, &schema()).unwrap();
        assert_eq!(r.value, json!({"path": "a.txt"}));
        assert!(r.notes.is_empty());
    }

    #[test]
    fn empty_text_is_an_empty_object() {
        assert_eq!(repair_arguments("  ", &schema()).unwrap().value, json!({}));
    }

    #[test]
    fn glued_objects_are_merged_and_noted() {
        let r = repair_arguments(r#"{"path":"a.txt"}{"path":"b.txt","ratio":1.5}"#, &schema()).unwrap();
        assert_eq!(r.value, json!({"path": "a.txt", "ratio": 1.5}));
        assert_eq!(r.notes.len(), 1);
        assert!(r.notes[0].contains("glued"));
    }

    #[test]
    fn stringly_scalars_are_coerced_only_where_the_schema_wants_them() {
        let r = repair_arguments(r#"{"path":"42","replace_all":"true","line_hint":"42","ratio":"0.5"}"#, &schema())
            .unwrap();
        assert_eq!(r.value, json!({"path": "42", "replace_all": true, "line_hint": 42, "ratio": 0.5}));
        assert_eq!(r.notes.len(), 3);
    }

    #[test]
    fn aliases_are_renamed_also_inside_arrays() {
        let r = repair_arguments(r#"{"file_path":"a","edits":[{"old_string":"x","replace_all":"false"}]}"#, &schema())
            .unwrap();
        assert_eq!(r.value, json!({"path": "a", "edits": [{"old_text": "x", "replace_all": false}]}));
        assert!(r.notes.iter().any(|n| n.contains("`edits[0].old_string`")), "{:?}", r.notes);
    }

    #[test]
    fn an_alias_never_overwrites_the_canonical_name() {
        let r = repair_arguments(r#"{"path":"a","file_path":"b"}"#, &schema()).unwrap();
        assert_eq!(r.value, json!({"path": "a", "file_path": "b"}));
    }

    #[test]
    fn a_json_string_holding_an_object_is_decoded() {
        let r = repair_arguments(r#""{\"path\":\"a\"}""#, &schema()).unwrap();
        assert_eq!(r.value, json!({"path": "a"}));
    }

    #[test]
    fn garbage_is_an_error_naming_the_problem() {
        let err = repair_arguments(r#"{"path": "a""#, &schema()).unwrap_err();
        assert!(err.to_string().contains("EOF"), "{err}");
        assert!(repair_arguments("{}[1]", &schema()).is_err());
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let a = json!({"b": 1, "a": {"d": [{"z": 1, "y": 2}], "c": null}});
        assert_eq!(canonical_json(&a), r#"{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}"#);
    }
}

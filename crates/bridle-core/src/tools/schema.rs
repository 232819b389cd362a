//! Tool definitions generated from argument types, in a shape every provider accepts.
//!
//! The rule: schemas come from the types (schemars), never by hand; the top level is a plain
//! object schema (no `anyOf`/`oneOf`, which Anthropic rejects) with subschemas inlined.

use bridle_protocol::ToolDefinition;
use schemars::generate::SchemaSettings;
use serde_json::{json, Value};

/// Builds the definition of a tool named `name` whose arguments are `A`.
pub(crate) fn definition_for<A: schemars::JsonSchema>(name: &str) -> ToolDefinition {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<A>();
    let mut value = schema.to_value();
    let description = take_string(&mut value, "description").unwrap_or_default();
    normalise_root(&mut value);
    ToolDefinition { name: name.to_string(), description, input_schema: value }
}

fn take_string(value: &mut Value, key: &str) -> Option<String> {
    value.as_object_mut()?.remove(key).and_then(|v| v.as_str().map(str::to_owned))
}

/// Drops meta keys and makes sure the root is `{"type":"object","properties":{...}}`.
pub(crate) fn normalise_root(value: &mut Value) {
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.insert("type".into(), json!("object"));
        obj.entry("properties").or_insert_with(|| json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says hello.
    ///
    /// Twice if asked.
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Hello {
        /// Whom to greet.
        name: String,
        /// Greet twice.
        #[serde(default)]
        twice: Option<bool>,
    }

    #[derive(schemars::JsonSchema)]
    struct NoArgs {}

    #[test]
    fn the_doc_comment_becomes_the_description_and_fields_the_schema() {
        let def = definition_for::<Hello>("hello");
        assert_eq!(def.description, "Says hello.\n\nTwice if asked.");
        assert_eq!(def.input_schema["type"], "object");
        assert_eq!(def.input_schema["properties"]["name"]["description"], "Whom to greet.");
        assert_eq!(def.input_schema["required"], json!(["name"]));
        assert!(def.input_schema.get("title").is_none());
        assert!(def.input_schema.get("$schema").is_none());
    }

    #[test]
    fn an_argument_free_tool_still_has_an_object_schema() {
        let def = definition_for::<NoArgs>("none");
        assert_eq!(def.input_schema["type"], "object");
        assert_eq!(def.input_schema["properties"], json!({}));
    }
}

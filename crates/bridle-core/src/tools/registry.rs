//! The registry: tools by name, and the path from a raw call to validated arguments.
//!
//! Rules: the first registration of a name wins and a duplicate is an error; definitions are
//! listed sorted by name so the request payload is byte-stable; a tool never runs on arguments
//! that failed validation against its own schema; a call is described to a client by its tool
//! ([`CallDescription`]), never by reading its arguments here.

use std::collections::BTreeMap;
use std::sync::Arc;

use bridle_protocol::{ClientKind, ToolCall, ToolDefinition};
use serde_json::Value;

use super::repair::{canonical_json, repair_arguments};
use super::{Bound, DynTool, Effect, ToolKind};

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// A tool of that name is already registered; the first one stays.
    #[error("a tool named `{0}` is already registered; the first registration is kept")]
    Duplicate(String),
    /// The name does not match `^[A-Za-z0-9_-]{1,64}$`.
    #[error("invalid tool name `{0}`: names are 1-64 characters of A-Z, a-z, 0-9, `_` and `-`")]
    InvalidName(String),
    /// The tool's schema is not a valid JSON Schema.
    #[error("tool `{name}` has an invalid schema: {message}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// Why a call cannot run; the message is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No tool of that name.
    #[error("unknown tool `{name}`; the available tools are: {available}")]
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The registered names, comma-separated.
        available: String,
    },
    /// The arguments are not JSON even after repair.
    #[error("the arguments for `{tool}` are not valid JSON ({message}); send one JSON object")]
    NotJson {
        /// The tool.
        tool: String,
        /// The parser's message.
        message: String,
    },
    /// The arguments do not match the schema.
    #[error("invalid arguments for `{tool}`: {problems}; fix them and call again")]
    Invalid {
        /// The tool.
        tool: String,
        /// Every problem, with its location.
        problems: String,
    },
}

#[derive(Clone)]
struct Entry {
    tool: Arc<dyn DynTool>,
    definition: ToolDefinition,
    validator: Arc<jsonschema::Validator>,
}

/// How a client shows a call: what kind of action it is, a title a person reads, and the
/// workspace paths it touches (as the model wrote them, each once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallDescription {
    /// The kind of action.
    pub kind: ClientKind,
    /// What a person reads.
    pub title: String,
    /// The paths it touches.
    pub paths: Vec<String>,
}

/// A call whose tool exists and whose arguments are repaired, valid and parsed.
#[derive(Clone)]
pub struct PreparedCall {
    /// The tool bound to its parsed arguments.
    pub call: Arc<dyn Bound>,
    /// Its name.
    pub name: String,
    /// What it may do.
    pub kind: ToolKind,
    /// What kind of action a client shows it as.
    pub client_kind: ClientKind,
    /// What else its success does.
    pub effect: Effect,
    /// The repaired, validated arguments (for hooks and the record).
    pub args: Value,
    /// `args` as canonical JSON (sorted keys): the identity of the call.
    pub canonical_args: String,
    /// What repair changed, for the model.
    pub repairs: Vec<String>,
}

impl PreparedCall {
    /// How a client shows this call, as its tool describes it.
    pub fn describe(&self) -> CallDescription {
        let mut paths: Vec<String> = Vec::new();
        for (path, _) in self.call.paths() {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        CallDescription { kind: self.client_kind, title: self.call.title().unwrap_or_else(|| self.name.clone()), paths }
    }
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("canonical_args", &self.canonical_args)
            .field("repairs", &self.repairs)
            .finish_non_exhaustive()
    }
}

/// Tools by name. Cloning is cheap (compiled schemas are shared), so a registry can be extended
/// with a session's MCP tools without compiling the built-ins again.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
    /// Why the tools are fewer than usual, said with an unknown tool's refusal ([`Self::narrowed`]).
    narrowed_by: Option<String>,
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a name already taken is refused and the first tool kept.
    pub fn register(&mut self, tool: Arc<dyn DynTool>) -> Result<(), RegistryError> {
        let definition = tool.definition();
        let name = definition.name.clone();
        if !valid_name(&name) {
            return Err(RegistryError::InvalidName(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        let validator = jsonschema::validator_for(&definition.input_schema)
            .map_err(|e| RegistryError::InvalidSchema { name: name.clone(), message: e.to_string() })?;
        self.tools.insert(name, Entry { tool, definition, validator: Arc::new(validator) });
        Ok(())
    }

    /// Every definition, sorted by name.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.values().map(|e| e.definition.clone()).collect()
    }

    /// This registry with only the tools `allowed` names: the rest are neither offered nor run,
    /// and a call of one is refused as unknown, saying `why` (a skill's `allowed-tools`).
    pub fn narrowed(&self, allowed: &[String], why: &str) -> ToolRegistry {
        let tools = self.tools.iter().filter(|(name, _)| allowed.contains(name)).map(|(n, e)| (n.clone(), e.clone()));
        ToolRegistry { tools: tools.collect(), narrowed_by: Some(why.to_string()) }
    }

    /// This registry without the tool `name` (not offered, and unknown if called).
    pub fn without(&self, name: &str) -> ToolRegistry {
        let mut registry = self.clone();
        registry.tools.remove(name);
        registry
    }

    /// Registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// Looks the tool up, repairs the arguments and validates them against the schema.
    pub fn prepare(&self, name: &str, raw_arguments: &str) -> Result<PreparedCall, CallError> {
        let entry = self.tools.get(name).ok_or_else(|| {
            let mut available = self.names().join(", ");
            if let Some(why) = &self.narrowed_by {
                available.push_str(&format!(" ({why})"));
            }
            CallError::UnknownTool { name: name.to_string(), available }
        })?;
        let repaired = repair_arguments(raw_arguments, &entry.definition.input_schema)
            .map_err(|e| CallError::NotJson { tool: name.to_string(), message: e.0 })?;
        let problems: Vec<String> = entry
            .validator
            .iter_errors(&repaired.value)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return Err(CallError::Invalid { tool: name.to_string(), problems: problems.join("; ") });
        }
        let call = entry
            .tool
            .clone()
            .bind(&repaired.value)
            .map_err(|e| CallError::Invalid { tool: name.to_string(), problems: e.to_string() })?;
        Ok(PreparedCall {
            call,
            name: name.to_string(),
            kind: entry.tool.kind(),
            client_kind: entry.tool.client_kind(),
            effect: entry.tool.effect(),
            canonical_args: canonical_json(&repaired.value),
            args: repaired.value,
            repairs: repaired.notes,
        })
    }

    /// How a client shows a call of `name` with `raw_arguments`: as its tool describes it, or,
    /// when the call cannot be prepared, by the tool's kind (if there is such a tool) and name.
    pub fn describe(&self, name: &str, raw_arguments: &str) -> CallDescription {
        match self.prepare(name, raw_arguments) {
            Ok(prepared) => prepared.describe(),
            Err(_) => CallDescription {
                kind: self.tools.get(name).map_or(ClientKind::Other, |e| e.tool.client_kind()),
                title: name.to_string(),
                paths: Vec::new(),
            },
        }
    }

    /// [`Self::prepare`] for a protocol call.
    pub fn prepare_call(&self, call: &ToolCall) -> Result<PreparedCall, CallError> {
        self.prepare(&call.name, &call.arguments)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};
    use async_trait::async_trait;
    use serde::Deserialize;

    /// Adds two numbers.
    #[derive(Deserialize, schemars::JsonSchema)]
    struct AddArgs {
        /// First.
        a: i64,
        /// Second.
        b: i64,
        /// Shout the answer.
        #[serde(default)]
        loud: Option<bool>,
    }

    struct Add;

    #[async_trait]
    impl Tool for Add {
        type Args = AddArgs;
        const NAME: &'static str = "add";
        const KIND: ToolKind = ToolKind::Read;
        const CLIENT_KIND: ClientKind = ClientKind::Think;
        fn title(args: &AddArgs) -> String {
            format!("Add {} and {}", args.a, args.b)
        }
        async fn run(&self, args: &AddArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
            let sum = args.a + args.b;
            Ok(ToolOutput::text(if args.loud == Some(true) { format!("{sum}!") } else { sum.to_string() }))
        }
    }

    struct Named(&'static str);

    impl DynTool for Named {
        fn definition(&self) -> ToolDefinition {
            ToolDefinition {
                name: self.0.into(),
                description: String::new(),
                input_schema: serde_json::json!({"type":"object"}),
            }
        }
        fn kind(&self) -> ToolKind {
            ToolKind::Read
        }
        fn effect(&self) -> Effect {
            Effect::None
        }
        fn bind(self: Arc<Self>, _: &Value) -> Result<Arc<dyn Bound>, ToolError> {
            Err(ToolError::new("never called"))
        }
    }

    #[test]
    fn the_first_registration_wins_and_a_duplicate_is_an_error() {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(Add)).unwrap();
        let err = registry.register(Arc::new(Named("add"))).unwrap_err();
        assert!(matches!(err, RegistryError::Duplicate(ref n) if n == "add"));
        assert_eq!(registry.definitions()[0].description, "Adds two numbers.");
    }

    #[test]
    fn definitions_are_sorted_by_name() {
        let mut registry = ToolRegistry::new();
        for name in ["zeta", "alpha", "mid"] {
            registry.register(Arc::new(Named(name))).unwrap();
        }
        let names: Vec<_> = registry.definitions().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["alpha", "mid", "zeta"]);
    }

    #[test]
    fn a_call_is_described_by_its_tool_and_an_unprepared_one_by_its_name() {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(Add)).unwrap();
        registry.register(Arc::new(Named("remote"))).unwrap();
        let described = registry.describe("add", r#"{"a":2,"b":3}"#);
        assert_eq!(described, CallDescription { kind: ClientKind::Think, title: "Add 2 and 3".into(), paths: vec![] });
        let invalid = registry.describe("add", r#"{"a":"two"}"#);
        assert_eq!((invalid.kind, invalid.title.as_str()), (ClientKind::Think, "add"));
        let unknown = registry.describe("sub", "{}");
        assert_eq!((unknown.kind, unknown.title.as_str()), (ClientKind::Other, "sub"));
    }

    #[test]
    fn invalid_names_are_refused() {
        let mut registry = ToolRegistry::new();
        assert!(matches!(registry.register(Arc::new(Named("a b"))), Err(RegistryError::InvalidName(_))));
        assert!(matches!(registry.register(Arc::new(Named(""))), Err(RegistryError::InvalidName(_))));
    }

    #[test]
    fn arguments_are_repaired_then_validated() {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(Add)).unwrap();
        let ok = registry.prepare("add", r#"{"a":"2","b":3}{"b":9}"#).unwrap();
        assert_eq!(ok.canonical_args, r#"{"a":2,"b":3}"#);
        assert_eq!(ok.repairs.len(), 2);

        let invalid = registry.prepare("add", r#"{"a":"two"}"#).unwrap_err();
        let CallError::Invalid { problems, .. } = &invalid else { panic!("{invalid:?}") };
        assert!(problems.contains("/a") && problems.contains("\"b\""), "{problems}");

        assert!(matches!(registry.prepare("add", "{"), Err(CallError::NotJson { .. })));
        let unknown = registry.prepare("sub", "{}").unwrap_err();
        assert_eq!(unknown.to_string(), "unknown tool `sub`; the available tools are: add");
    }
}

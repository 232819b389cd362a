//! `[pricing]`: what each model's tokens cost, for the Usage view and the session's header.
//!
//! Rule: a model not in the table has no price; nothing is guessed.

use serde::{Deserialize, Serialize};

/// `[pricing]`: what each model's tokens cost, in the user's currency, per million tokens.
///
/// ```toml
/// [pricing]
/// currency = "EUR"
/// [pricing.models."gpt-4.1"]
/// input = 1.85
/// cached_input = 0.46
/// output = 7.40
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PricingConfig {
    /// ISO 4217 code, e.g. `USD`, `EUR`.
    pub currency: String,
    /// Prices per model id.
    pub models: std::collections::BTreeMap<String, ModelPriceConfig>,
}

impl Default for PricingConfig {
    fn default() -> Self {
        Self { currency: "USD".into(), models: Default::default() }
    }
}

/// One model's prices per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPriceConfig {
    /// Uncached input.
    pub input: f64,
    /// Cached input (defaults to the input price).
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// Output.
    pub output: f64,
}

impl PricingConfig {
    /// The price of `model`, if the table has it.
    pub fn price_of(&self, model: &str) -> Option<bridle_protocol::ModelPrice> {
        let p = self.models.get(model)?;
        Some(bridle_protocol::ModelPrice {
            currency: self.currency.clone(),
            input: p.input,
            cached_input: p.cached_input.unwrap_or(p.input),
            output: p.output,
        })
    }
}

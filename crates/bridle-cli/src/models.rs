//! `bridle models`: what the configured server offers, so the user need not know an id by heart.

use crate::cli::{Global, ModelsArgs, EXIT_ERROR};
use crate::setup;
use crate::terminal::safe;

pub async fn models(global: &Global, args: &ModelsArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let mut provider = args.provider.clone();
    // Listing needs no model: any placeholder satisfies the provider's shape.
    if provider.model.is_none() && setup.config.provider.is_none() {
        provider.model = Some(String::new());
    }
    let config = crate::drive::provider_config(&setup, &provider)?;
    let models = match bridle_core::provider::models::list(&config, setup.api_key(&config).map(|(key, _)| key)).await {
        Ok(models) => models,
        Err(e) => {
            eprintln!("bridle models: {} ({})", safe(&e.to_string()), safe(&config.base_url));
            return Ok(EXIT_ERROR);
        }
    };
    if args.json {
        println!("{}", serde_json::json!({ "models": models }));
    } else {
        for m in &models {
            let window = m.context_window.map_or_else(|| "?".to_string(), |w| w.to_string());
            println!("{}  {window}", safe(&m.id));
        }
    }
    Ok(0)
}

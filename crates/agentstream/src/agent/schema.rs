//! A tool's JSON Schema derived from its argument type (feature
//! `schemars`), so the schema and the serde type cannot drift apart.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

/// The JSON Schema of `T`, in the shape a tool's
/// [`parameters`](super::TypedTool::parameters) takes: derived with
/// [schemars](https://docs.rs/schemars) (`#[derive(JsonSchema)]` beside
/// `#[derive(Deserialize)]`, its `#[serde(...)]` attributes honoured),
/// nested types written inline (no `$ref`, which the argument validator
/// and some providers do not follow), without `$schema` and the type's
/// `title`. Doc comments on the type and its fields become
/// `description`s the model reads.
///
/// A hand-written schema stays possible: `parameters` is an ordinary
/// method, and this is one way to write its body.
///
/// ```
/// use agentstream::agent::{derived_parameters, validate_arguments};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReadArgs {
///     /// The file to read.
///     path: String,
///     /// How many lines, at most.
///     limit: Option<u32>,
/// }
///
/// let schema = derived_parameters::<ReadArgs>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], json!(["path"]));
/// assert_eq!(schema["properties"]["path"]["description"], "The file to read.");
/// assert!(validate_arguments(&schema, &mut json!({"path": "a.txt"})).is_empty());
/// assert!(!validate_arguments(&schema, &mut json!({"limit": 3})).is_empty());
/// ```
pub fn derived_parameters<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    schema.remove("title");
    schema.to_value()
}

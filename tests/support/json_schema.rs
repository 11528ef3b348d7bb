//! A validator for the part of JSON Schema (2020-12) that docs/json/*.schema.json use: `type`,
//! `const`, `enum`, `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
//! `minimum` and `$ref` (to `#/$defs/NAME` of the same file or `FILE#/$defs/NAME` beside it).
//! Any other keyword is refused, so a schema cannot quietly rely on a check nobody makes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test support: a broken schema is a failed test"
)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Keywords that only document.
const ANNOTATIONS: [&str; 5] = ["$schema", "$id", "title", "description", "$defs"];

pub struct Schemas {
    dir: PathBuf,
}

impl Schemas {
    pub fn new(dir: &Path) -> Self {
        Schemas {
            dir: dir.to_owned(),
        }
    }

    pub fn load(&self, file: &str) -> Value {
        let path = self.dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("schema {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("schema {}: {e}", path.display()))
    }

    /// Every place where `value` breaks the schema in `file`, as "path: what" lines.
    pub fn errors(&self, file: &str, value: &Value) -> Vec<String> {
        let root = self.load(file);
        let mut errors = Vec::new();
        self.check(&root, &root, value, "$", &mut errors);
        errors
    }

    fn check(
        &self,
        root: &Value,
        schema: &Value,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let Some(keywords) = schema.as_object() else {
            match schema {
                Value::Bool(true) => {}
                Value::Bool(false) => errors.push(format!("{at}: no value is allowed here")),
                other => panic!("schema at {at} is not an object or boolean: {other}"),
            }
            return;
        };
        for (keyword, rule) in keywords {
            match keyword.as_str() {
                "$ref" => {
                    let (root, target) = self.resolve(root, rule);
                    self.check(&root, &target, value, at, errors);
                }
                "type" => {
                    let allowed: Vec<&str> = match rule {
                        Value::String(one) => vec![one.as_str()],
                        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                        other => panic!("type at {at}: {other}"),
                    };
                    if !allowed.iter().any(|t| has_type(value, t)) {
                        errors.push(format!("{at}: {value} is not of type {allowed:?}"));
                    }
                }
                "const" if value != rule => {
                    errors.push(format!("{at}: {value} is not {rule}"));
                }
                "enum" => {
                    let options = rule.as_array().expect("enum is an array");
                    if !options.contains(value) {
                        errors.push(format!("{at}: {value} is not one of {rule}"));
                    }
                }
                "minimum" => {
                    let minimum = rule.as_f64().expect("minimum is a number");
                    if value.as_f64().is_some_and(|v| v < minimum) {
                        errors.push(format!("{at}: {value} is below {minimum}"));
                    }
                }
                "required" => {
                    if let Some(fields) = value.as_object() {
                        for name in rule.as_array().expect("required is an array") {
                            let name = name.as_str().expect("required names are strings");
                            if !fields.contains_key(name) {
                                errors.push(format!("{at}: the required field {name} is missing"));
                            }
                        }
                    }
                }
                "properties" => {
                    if let Some(fields) = value.as_object() {
                        for (name, field_schema) in rule.as_object().expect("properties") {
                            if let Some(field) = fields.get(name) {
                                self.check(
                                    root,
                                    field_schema,
                                    field,
                                    &format!("{at}.{name}"),
                                    errors,
                                );
                            }
                        }
                    }
                }
                "additionalProperties" => {
                    if let Some(fields) = value.as_object() {
                        let declared = keywords.get("properties").and_then(Value::as_object);
                        for (name, field) in fields {
                            if !declared.is_some_and(|d| d.contains_key(name)) {
                                self.check(root, rule, field, &format!("{at}.{name}"), errors);
                            }
                        }
                    }
                }
                "items" => {
                    if let Some(items) = value.as_array() {
                        for (index, item) in items.iter().enumerate() {
                            self.check(root, rule, item, &format!("{at}[{index}]"), errors);
                        }
                    }
                }
                "anyOf" => {
                    let options = rule.as_array().expect("anyOf is an array");
                    let fits = options.iter().any(|option| {
                        let mut inner = Vec::new();
                        self.check(root, option, value, at, &mut inner);
                        inner.is_empty()
                    });
                    if !fits {
                        errors.push(format!("{at}: {value} fits none of anyOf"));
                    }
                }
                "const" => {}
                other if ANNOTATIONS.contains(&other) => {}
                other => {
                    panic!("schema keyword {other} (at {at}) is not supported by this validator")
                }
            }
        }
    }

    /// The schema a `$ref` points at, with the document it belongs to.
    fn resolve(&self, root: &Value, reference: &Value) -> (Value, Value) {
        let reference = reference.as_str().expect("$ref is a string");
        let (file, pointer) = reference
            .split_once('#')
            .unwrap_or_else(|| panic!("$ref {reference} has no #"));
        let document = if file.is_empty() {
            root.clone()
        } else {
            self.load(file)
        };
        let target = document
            .pointer(pointer)
            .unwrap_or_else(|| panic!("$ref {reference} points at nothing"))
            .clone();
        (document, target)
    }

    /// Fields of `value` that the schema in `file` declares, out of the schema's order: a
    /// document's fields come in the order its schema lists them (fields it does not declare may
    /// stand anywhere). Checks nested objects that the schema declares with `properties` too.
    pub fn order_errors(&self, file: &str, value: &Value) -> Vec<String> {
        let root = self.load(file);
        let mut errors = Vec::new();
        self.check_order(&root, &root, value, "$", &mut errors);
        errors
    }

    fn check_order(
        &self,
        root: &Value,
        schema: &Value,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let Some(keywords) = schema.as_object() else {
            return;
        };
        if let Some(reference) = keywords.get("$ref") {
            let (root, target) = self.resolve(root, reference);
            self.check_order(&root, &target, value, at, errors);
        }
        if let Some(options) = keywords.get("anyOf").and_then(Value::as_array) {
            for option in options {
                let mut fits = Vec::new();
                self.check(root, option, value, at, &mut fits);
                if fits.is_empty() {
                    self.check_order(root, option, value, at, errors);
                    break;
                }
            }
        }
        if let (Some(items), Some(values)) = (keywords.get("items"), value.as_array()) {
            for (index, item) in values.iter().enumerate() {
                self.check_order(root, items, item, &format!("{at}[{index}]"), errors);
            }
        }
        let (Some(declared), Some(fields)) = (
            keywords.get("properties").and_then(Value::as_object),
            value.as_object(),
        ) else {
            return;
        };
        let schema_order: Vec<&String> = declared.keys().collect();
        let got: Vec<&String> = fields
            .keys()
            .filter(|k| declared.contains_key(*k))
            .collect();
        let expected: Vec<&String> = schema_order
            .iter()
            .copied()
            .filter(|k| fields.contains_key(*k))
            .collect();
        if got != expected {
            errors.push(format!(
                "{at}: fields in the order {got:?}, the schema's is {expected:?}"
            ));
        }
        for (name, field_schema) in declared {
            if let Some(field) = fields.get(name) {
                self.check_order(root, field_schema, field, &format!("{at}.{name}"), errors);
            }
        }
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        other => panic!("unknown JSON Schema type {other}"),
    }
}
